import type { JsonRpcId } from '../mcp/jsonrpc.ts';

/** The whole response, JSON-RPC envelope included, never exceeds this. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface DiscoveredTool {
  readonly name: string;
  readonly title?: unknown;
  readonly description?: unknown;
  readonly inputSchema: unknown;
}

export type PageResult<R> =
  | { readonly ok: true; readonly result: R; readonly count: number }
  | { readonly ok: false; readonly error: 'tool_schema_too_large' };

/**
 * The longest prefix of `tools` whose rendered response fits the bound.
 * Schemas are never truncated or replaced: a tool that cannot fit even alone
 * is an error (413), and a page that fills up ends early (the cursor resumes
 * after it).
 */
export function fitPage<R>(
  id: JsonRpcId,
  tools: readonly DiscoveredTool[],
  render: (page: readonly DiscoveredTool[], complete: boolean) => R,
): PageResult<R> {
  const size = (page: readonly DiscoveredTool[]) =>
    Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', id, result: render(page, page.length === tools.length) }));
  let n = tools.length;
  while (n > 0 && size(tools.slice(0, n)) > MAX_RESPONSE_BYTES) n--;
  if (n === 0 && tools.length > 0) return { ok: false, error: 'tool_schema_too_large' };
  const page = tools.slice(0, n);
  return { ok: true, result: render(page, n === tools.length), count: n };
}
