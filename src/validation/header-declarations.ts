import { isRecord } from '../json/record.ts';

/**
 * MCP 2026-07-28 lets a tool mirror parameters into `Mcp-Param-{name}`
 * headers (`x-mcp-header` on a property reached from the root through
 * `properties` alone), so that intermediaries can route on them without the
 * body. A component that reads the body must check that the two agree: a
 * server or gateway acting on the header would otherwise act on a value the
 * schema never checked.
 */
export interface ParamHeader {
  /** Lower-case field name, `mcp-param-…`. */
  readonly field: string;
  /** Member names from the arguments' root to the value. */
  readonly path: readonly string[];
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const MAX_DEPTH = 32;

/** The mirrored parameters a tool's inputSchema declares, in schema order. */
export function paramHeaders(schema: unknown): readonly ParamHeader[] {
  const found: ParamHeader[] = [];
  const visit = (node: unknown, path: readonly string[]): void => {
    if (!isRecord(node) || path.length > MAX_DEPTH) return;
    const name = node['x-mcp-header'];
    if (path.length > 0 && typeof name === 'string' && TOKEN.test(name))
      found.push({ field: `mcp-param-${name.toLowerCase()}`, path });
    if (!isRecord(node.properties)) return;
    for (const [key, child] of Object.entries(node.properties)) visit(child, [...path, key]);
  };
  visit(schema, []);
  return found;
}
