/**
 * Tool-discovery ranking: a lexical BM25F engine over tool names, titles,
 * descriptions, input-schema property names and policy-supplied aliases and
 * examples. Local and deterministic: no network, no model. Permissions apply
 * before ranking, so tools a caller may not call never influence its results,
 * scores or counts. See docs/discovery-ranking.md.
 */
import { buildIndexData, type IndexData } from './build.ts';
import type { ToolDoc } from './fields.ts';
import { checkParams, DEFAULT_PARAMS, type RankParams } from './params.ts';
import { searchIndex, type Allowed, type SearchResult } from './search.ts';

export type { ToolDoc } from './fields.ts';
export type { RankParams } from './params.ts';
export { DEFAULT_PARAMS } from './params.ts';

interface SearchOptions {
  /** Page size; non-positive or non-finite yields an empty page (total still counted). */
  readonly limit: number;
  /** Hits to skip before the page; default 0. */
  readonly offset?: number | undefined;
  /** Names (or a predicate on names) the caller may call; absent means all. */
  readonly allowed?: Allowed | undefined;
}

export interface DiscoveryIndex {
  /** Distinct tool names indexed, ascending. A later duplicate of a name is ignored. */
  readonly names: readonly string[];
  /** Never throws: any query string, however odd, yields a (possibly empty) result. */
  search(query: string, opts: SearchOptions): SearchResult;
}

function count(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? Math.max(0, Math.floor(v)) : fallback;
}

/**
 * Builds an immutable index; when the catalogue changes, build a new one.
 * `params` exists for evaluation and tests; production uses the defaults.
 */
export function buildIndex(tools: readonly ToolDoc[], params: RankParams = DEFAULT_PARAMS): DiscoveryIndex {
  const p = checkParams(params) ? params : DEFAULT_PARAMS;
  const data: IndexData = buildIndexData(Array.isArray(tools) ? tools : [], p);
  return Object.freeze({
    names: Object.freeze([...data.names]),
    search(query: string, opts: SearchOptions): SearchResult {
      const limit = count(opts?.limit, 0);
      const offset = count(opts?.offset, 0);
      return searchIndex(data, p, query, limit, offset, opts?.allowed);
    },
  });
}
