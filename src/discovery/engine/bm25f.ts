import { FIELD_COUNT } from './fields.ts';
import type { RankParams } from './params.ts';

/** BM25's inverse document frequency of a term held by `df` of `count` tools; never negative. */
export function idf(count: number, df: number): number {
  return Math.log(1 + (count - df + 0.5) / (df + 0.5));
}

/**
 * BM25F's per-field constants under one set of field-length averages: an
 * occurrence's weight and the length normalisation `1 − b + b · len / avg`
 * as `base + slope · len`. Computed once per search, not per posting entry.
 */
export interface Norms {
  readonly weight: Float64Array;
  readonly base: Float64Array;
  readonly slope: Float64Array;
  readonly k1: number;
}

export function normsFor(avgLength: Float64Array, params: RankParams): Norms {
  const weight = new Float64Array(FIELD_COUNT);
  const base = new Float64Array(FIELD_COUNT);
  const slope = new Float64Array(FIELD_COUNT);
  for (let f = 0; f < FIELD_COUNT; f++) {
    const avg = avgLength[f] as number;
    const b = params.b[f] as number;
    weight[f] = params.weights[f] as number;
    base[f] = avg > 0 ? 1 - b : 1;
    slope[f] = avg > 0 ? b / avg : 0;
  }
  return { weight, base, slope, k1: params.k1 };
}

/**
 * BM25F's combined term frequency of one posting entry, saturated:
 * `(k1 + 1) · tf / (k1 + tf)`. Only the fields in `bits` hold the term, so
 * only those are visited.
 */
export function saturatedTf(
  tf: Uint16Array,
  at: number,
  bits: number,
  lengths: readonly Float64Array[],
  d: number,
  norms: Norms,
): number {
  let sum = 0;
  for (let rest = bits; rest !== 0; rest &= rest - 1) {
    const f = 31 - Math.clz32(rest & -rest);
    const norm = (norms.base[f] as number) + (norms.slope[f] as number) * ((lengths[f] as Float64Array)[d] as number);
    sum += ((norms.weight[f] as number) * (tf[at + f] as number)) / norm;
  }
  const k1 = norms.k1;
  return sum > 0 ? ((k1 + 1) * sum) / (k1 + sum) : 0;
}
