import { isRecord } from '../json/record.ts';

/**
 * Where a tool result carries text a model reads: `text` content, the text of
 * an embedded resource, and every string value of `structuredContent` (member
 * names are the schema's, not the tool's output, and stay as they are).
 * `editTexts` rebuilds the result with each such string passed through `edit`,
 * copying only what changed, so an untouched result comes back as the very
 * same object.
 */
export type TextEdit = (text: string) => string;

/** Bounds the walk over hostile structuredContent: far more nodes than any honest result has. */
const MAX_NODES = 200_000;

export class TooManyNodes extends Error {}

export function editTexts(
  result: Readonly<Record<string, unknown>>,
  edit: TextEdit,
): Readonly<Record<string, unknown>> {
  let out: Record<string, unknown> | undefined;
  const content = result.content;
  if (Array.isArray(content)) {
    const edited = editArray(content, (item) => editContentItem(item, edit));
    if (edited !== content) out = { ...result, content: edited };
  }
  if (Object.hasOwn(result, 'structuredContent')) {
    const budget = { nodes: 0 };
    const structured = editStrings(result.structuredContent, edit, budget);
    if (structured !== result.structuredContent) out = { ...(out ?? result), structuredContent: structured };
  }
  return out ?? result;
}

function editContentItem(item: unknown, edit: TextEdit): unknown {
  if (!isRecord(item)) return item;
  if (item.type === 'text' && typeof item.text === 'string') {
    const text = edit(item.text);
    return text === item.text ? item : { ...item, text };
  }
  const resource = item.resource;
  if (item.type === 'resource' && isRecord(resource) && typeof resource.text === 'string') {
    const text = edit(resource.text);
    return text === resource.text ? item : { ...item, resource: { ...resource, text } };
  }
  return item;
}

function editStrings(value: unknown, edit: (s: string) => string, budget: { nodes: number }): unknown {
  if (++budget.nodes > MAX_NODES) throw new TooManyNodes('structuredContent is too large to inspect');
  if (typeof value === 'string') return edit(value);
  if (Array.isArray(value)) return editArray(value, (v) => editStrings(v, edit, budget));
  if (!isRecord(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value)) {
    const edited = editStrings(v, edit, budget);
    if (edited === v) continue;
    out ??= { ...value };
    // A member named __proto__ is an own data property of parsed JSON: define it, never assign through the setter.
    Object.defineProperty(out, k, { value: edited, enumerable: true, writable: true, configurable: true });
  }
  return out ?? value;
}

function editArray(items: readonly unknown[], edit: (v: unknown) => unknown): readonly unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < items.length; i++) {
    const edited = edit(items[i]);
    if (edited === items[i]) continue;
    out ??= [...items];
    out[i] = edited;
  }
  return out ?? items;
}
