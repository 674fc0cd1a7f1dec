/**
 * The input rules shared by both discovery doors (the `toolgate/discover`
 * method and the injected `search_tools` tool). Pure; never throws.
 */
import type { ValidationError } from '../validation/types.ts';

export const MAX_QUERY_LENGTH = 500;
export const MAX_LIMIT = 16;
export const DEFAULT_LIMIT = 16;

// C0, DEL and C1 controls; a query is one line of text.
// oxlint-disable-next-line no-control-regex -- a query with control characters is refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export interface DiscoverParams {
  readonly query: string;
  readonly limit: number;
  readonly cursor: string | undefined;
}

export type ParamsResult =
  | { readonly ok: true; readonly params: DiscoverParams }
  | { readonly ok: false; readonly errors: readonly ValidationError[] };

/**
 * `allowCursor` is false for the tool door: a tool call has no cursor, it
 * pages by asking again with a larger limit.
 */
export function readDiscoverParams(raw: unknown, allowCursor: boolean): ParamsResult {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, errors: [{ instancePath: '', keyword: 'type' }] };
  }
  const errors: ValidationError[] = [];
  const known = allowCursor ? ['query', 'limit', 'cursor', '_meta'] : ['query', 'limit'];
  // Unknown names are the caller's own content: counted at the parent, never named.
  const unknown = Object.keys(raw).filter((key) => !known.includes(key)).length;
  if (unknown > 0) errors.push({ instancePath: '', keyword: 'additionalProperties', count: unknown });
  const r = raw as Record<string, unknown>;
  const { query, limit, cursor } = r;
  if (query === undefined) errors.push({ instancePath: '', keyword: 'required', missing: ['query'] });
  else if (typeof query !== 'string') errors.push({ instancePath: '/query', keyword: 'type' });
  else if (query.trim().length === 0) errors.push({ instancePath: '/query', keyword: 'minLength' });
  else if (query.length > MAX_QUERY_LENGTH) errors.push({ instancePath: '/query', keyword: 'maxLength' });
  else if (CONTROL.test(query)) errors.push({ instancePath: '/query', keyword: 'pattern' });
  if (limit !== undefined) {
    if (typeof limit !== 'number' || !Number.isInteger(limit)) errors.push({ instancePath: '/limit', keyword: 'type' });
    else if (limit < 1) errors.push({ instancePath: '/limit', keyword: 'minimum' });
    else if (limit > MAX_LIMIT) errors.push({ instancePath: '/limit', keyword: 'maximum' });
  }
  if (cursor !== undefined && typeof cursor !== 'string') errors.push({ instancePath: '/cursor', keyword: 'type' });
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    params: {
      query: query as string,
      limit: (limit as number | undefined) ?? DEFAULT_LIMIT,
      cursor: cursor as string | undefined,
    },
  };
}
