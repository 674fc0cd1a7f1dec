import { FIELD_COUNT } from './fields.ts';

/** Ranking constants; the defaults below are the production choice. */
export interface RankParams {
  /** BM25 term-frequency saturation. */
  readonly k1: number;
  /** Per field (FIELDS order): weight of one occurrence. */
  readonly weights: readonly number[];
  /** Per field: BM25 length normalisation strength. */
  readonly b: readonly number[];
  /** Weight of a vocabulary term that shares a long prefix with a query term. */
  readonly prefixWeight: number;
  /** Shortest shared prefix that counts. */
  readonly minPrefix: number;
  /** Pseudo-relevance feedback: first-pass tools read for expansion terms (0 = off). */
  readonly fbDocs: number;
  /** Expansion terms kept. */
  readonly fbTerms: number;
  /** Expansion mass relative to the query's own terms. */
  readonly fbWeight: number;
  /** Terms in more than this share of allowed tools are too common to expand with. */
  readonly fbMaxDf: number;
  /** Share of the n-gram cosine in the combined score of the re-scored tools (0 = off). */
  readonly gramWeight: number;
  /** How many first-pass leaders are re-scored. */
  readonly gramDepth: number;
}

export const DEFAULT_PARAMS: RankParams = Object.freeze({
  k1: 1.2,
  weights: Object.freeze([3, 2, 1, 0.5, 2.5, 1.5]),
  b: Object.freeze([0.5, 0.5, 0.75, 0.75, 0.5, 0.75]),
  prefixWeight: 0.5,
  minPrefix: 5,
  fbDocs: 5,
  fbTerms: 10,
  fbWeight: 0.1,
  fbMaxDf: 0.1,
  gramWeight: 0.4,
  gramDepth: 50,
});

export function checkParams(p: RankParams): boolean {
  return (
    p.weights.length === FIELD_COUNT &&
    p.b.length === FIELD_COUNT &&
    p.gramWeight >= 0 &&
    p.gramWeight < 1 &&
    Number.isInteger(p.gramDepth) &&
    p.gramDepth >= 0
  );
}
