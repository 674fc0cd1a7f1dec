/** Nearest-rank percentile (p in 0..100) of unsorted samples; NaN when empty. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

/** A median over rounds and how far the rounds spread around it. */
export interface Spread {
  readonly median: number;
  /** Interquartile range (nearest-rank p75 − p25); 0 with one sample. */
  readonly spread: number;
}

export function spreadOf(samples: readonly number[]): Spread | undefined {
  const xs = samples.filter((x) => Number.isFinite(x));
  if (xs.length === 0) return undefined;
  return { median: median(xs), spread: percentile(xs, 75) - percentile(xs, 25) };
}
