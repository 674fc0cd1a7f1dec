/**
 * Walks a paginated `tools/list`. The page source is a plain function so the
 * walk's rules (caps, loop guard, page shape) are testable without a server.
 */

/** Fetches one page: `undefined` asks for the first page. Rejects on transport or JSON-RPC failure. */
export type PageSource = (cursor: string | undefined) => Promise<unknown>;

export interface WalkLimits {
  /** Most pages read in one walk; a server still paging after that is treated as broken. */
  readonly maxPages: number;
  /** Most entries accepted in one walk, across pages; bounds memory. */
  readonly maxEntries: number;
}

export const DEFAULT_WALK_LIMITS: WalkLimits = Object.freeze({ maxPages: 1000, maxEntries: 100_000 });

type WalkFailure = 'request_failed' | 'malformed_page' | 'cursor_repeated' | 'page_cap' | 'entry_cap';

export type WalkResult =
  | { readonly ok: true; readonly entries: readonly unknown[]; readonly pages: number }
  | { readonly ok: false; readonly code: WalkFailure; readonly pages: number; readonly error?: unknown };

/**
 * Reads every page, following `nextCursor`, and returns the concatenated
 * `tools` arrays. A walk is all or nothing: any failure discards what was
 * read, so a half-read catalogue can never replace a whole one. An absent,
 * null or empty `nextCursor` ends the walk; a cursor seen before in the same
 * walk means the server is looping. Never rejects.
 */
export async function walkPages(source: PageSource, limits: WalkLimits = DEFAULT_WALK_LIMITS): Promise<WalkResult> {
  const entries: unknown[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    if (pages >= limits.maxPages) return { ok: false, code: 'page_cap', pages };
    let page: unknown;
    try {
      page = await source(cursor);
    } catch (error) {
      return { ok: false, code: 'request_failed', pages, error };
    }
    pages++;
    const read = readPage(page);
    if (!read.ok) return { ok: false, code: 'malformed_page', pages };
    if (entries.length + read.tools.length > limits.maxEntries) return { ok: false, code: 'entry_cap', pages };
    for (const t of read.tools) entries.push(t);
    if (read.next === undefined) return { ok: true, entries, pages };
    if (seen.has(read.next)) return { ok: false, code: 'cursor_repeated', pages };
    seen.add(read.next);
    cursor = read.next;
  }
}

type Page = { ok: true; tools: readonly unknown[]; next: string | undefined } | { ok: false };

function readPage(page: unknown): Page {
  if (typeof page !== 'object' || page === null || Array.isArray(page)) return { ok: false };
  const { tools, nextCursor } = page as { tools?: unknown; nextCursor?: unknown };
  if (!Array.isArray(tools)) return { ok: false };
  if (nextCursor === undefined || nextCursor === null || nextCursor === '') return { ok: true, tools, next: undefined };
  if (typeof nextCursor !== 'string') return { ok: false };
  return { ok: true, tools, next: nextCursor };
}
