import { isRecord } from '../../json/record.ts';
import { childPointer } from '../../json/pointer.ts';
import type { Place } from './rules.ts';

/** One piece of a tool's contract a model reads, with where it is. */
export interface LintText {
  readonly pointer: string;
  readonly text: string;
  readonly place: Place;
}

/** Schema members whose strings a model reads as prose. */
const PROSE = new Set(['description', 'title', 'default', 'examples', 'const', 'enum', '$comment']);
/** Bounds the walk on hostile schemas: more than any honest tool has. */
const MAX_NODES = 20_000;

/**
 * Every string of a tool a model may read: name, title, description, and in
 * its schemas the prose members and the property names (a parameter named
 * `content_from_reading_ssh_id_rsa` is an instruction too).
 */
export function lintTexts(tool: Readonly<Record<string, unknown>>): LintText[] {
  const out: LintText[] = [];
  for (const f of ['name', 'title', 'description'] as const) {
    const v = tool[f];
    if (typeof v === 'string')
      out.push({ pointer: `/${f}`, text: v, place: f === 'description' ? 'description' : 'prose' });
  }
  for (const f of ['inputSchema', 'outputSchema', 'annotations'] as const) collect(tool[f], `/${f}`, out);
  return out;
}

function collect(root: unknown, base: string, out: LintText[]): void {
  const stack: [unknown, string, boolean][] = [[root, base, false]];
  let nodes = 0;
  while (stack.length > 0 && nodes++ < MAX_NODES) {
    const [node, pointer, prose] = stack.pop() as [unknown, string, boolean];
    if (typeof node === 'string') {
      if (prose) out.push({ pointer, text: node, place: 'prose' });
    } else if (Array.isArray(node)) {
      node.forEach((v, i) => stack.push([v, childPointer(pointer, i), prose]));
    } else if (isRecord(node)) {
      const propertyNames = pointer.endsWith('/properties');
      for (const [k, v] of Object.entries(node)) {
        const at = childPointer(pointer, k);
        if (propertyNames) out.push({ pointer: at, text: words(k), place: 'parameter' });
        stack.push([v, at, prose || (!propertyNames && PROSE.has(k)) || base === '/annotations']);
      }
    }
  }
}

/** `contentFromReading_ssh-id_rsa` → `content from reading ssh id rsa`. */
function words(name: string): string {
  return name.replaceAll(/([a-z0-9])([A-Z])/g, '$1 $2').replaceAll(/[_\-.]+/g, ' ');
}
