/**
 * Delay before retry number `failures` (1 for the first retry): exponential
 * from `baseMs`, capped at `maxMs`, with "equal jitter" (half fixed, half
 * random) so replicas that lost the upstream together do not come back in
 * lockstep, yet never retry sooner than half the nominal delay.
 * `random` returns a number in [0, 1).
 */
export function backoffDelay(
  failures: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(failures, 1) - 1, 30);
  const nominal = Math.min(maxMs, baseMs * 2 ** exponent);
  const raw = random();
  const r = Number.isFinite(raw) ? Math.min(Math.max(raw, 0), 1) : 0;
  return Math.round(nominal / 2 + (nominal / 2) * r);
}
