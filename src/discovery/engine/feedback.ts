import { idf } from './bm25f.ts';
import type { IndexData } from './build.ts';
import type { Stats } from './permit.ts';
import type { RankParams } from './params.ts';

export interface Expansion {
  readonly term: string;
  readonly weight: number;
}

/**
 * How many allowed documents hold a term: exact up to `cap`, past it only
 * some larger number. With nothing denied, the posting's length.
 */
function allowedDf(data: IndexData, term: string, mask: Uint8Array, allowedCount: number, cap: number): number {
  const posting = data.postings.get(term);
  if (posting === undefined) return 0;
  const held = posting.docs.length;
  const denied = mask.length - allowedCount;
  // Even if every denied document held the term, this many allowed ones
  // would: a common term is rejected without counting, and with nothing
  // denied this is the count.
  if (held - denied > cap || denied === 0) return held - denied;
  let df = 0;
  for (let i = 0; i < held && df <= cap; i++) if (mask[posting.docs[i] as number] === 1) df++;
  return df;
}

function byTerm(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Pseudo-relevance feedback (RM3-style): the best first-pass tools say in
 * their own words what the request is about, so their most prominent terms
 * join the query at reduced weight, and a vague request also reaches tools
 * that describe the same need in other words. A term must occur in at least
 * two allowed tools (else it can only lift the tool it came from) and in at
 * most the `fbMaxDf` share of them, or two (else it says nothing). Only
 * allowed tools are read: the feedback tools come from the permitted ranking
 * and document frequencies are counted over the allowed set, so the
 * expansion is the one an index of the allowed tools alone would make.
 */
export function feedbackTerms(
  data: IndexData,
  params: RankParams,
  top: readonly number[],
  topScores: readonly number[],
  queryTerms: ReadonlySet<string>,
  mask: Uint8Array,
  stats: Stats,
): Expansion[] {
  const first = topScores[0] ?? 0;
  if (top.length === 0 || first <= 0) return [];
  const mass = new Map<string, number>();
  for (let i = 0; i < top.length; i++) {
    const d = top[i] as number;
    const docWeight = (topScores[i] as number) / first;
    const doc = data.forward[d];
    if (doc === undefined) continue;
    for (let t = 0; t < doc.terms.length; t++) {
      const term = doc.terms[t] as string;
      const share = doc.share[t] as number;
      if (share <= 0 || queryTerms.has(term)) continue;
      mass.set(term, (mass.get(term) ?? 0) + docWeight * share);
    }
  }
  const ranked = [...mass].sort((a, b) => b[1] - a[1] || byTerm(a[0], b[0]));
  // Small catalogues still allow a term shared by two tools.
  const maxDf = Math.max(2, params.fbMaxDf * stats.count);
  const kept: Expansion[] = [];
  let total = 0;
  for (const [term, m] of ranked) {
    if (kept.length >= params.fbTerms) break;
    // Counting stops once a term is too common: the first pass is cheap, not this.
    const df = allowedDf(data, term, mask, stats.count, maxDf);
    if (df < 2 || df > maxDf) continue;
    const weight = m * idf(stats.count, df);
    kept.push({ term, weight });
    total += weight;
  }
  if (total <= 0) return [];
  return kept.map((e) => ({ term: e.term, weight: e.weight / total }));
}
