/**
 * Benchmark knobs from BENCH_* environment variables, validated once and
 * frozen. Defaults keep the default run (the cases with issue 20's targets)
 * under ten minutes on a 2-core machine: many short interleaved rounds catch
 * more quiet moments, and their median moves less than any single long run.
 */
export interface BenchConfig {
  /** Length of each saturation run (BENCH_CONNECTIONS connections, as fast as the target answers). */
  readonly seconds: number;
  /** Length of each fixed-rate run (BENCH_RATE requests per second offered, below every target's saturation). */
  readonly rateSeconds: number;
  readonly rate: number;
  /** Load before each measurement, to warm the JIT and refill pools. */
  readonly warmupSeconds: number;
  /** Length of each serial (one connection) latency run. */
  readonly latencySeconds: number;
  /** How many times every case is measured; medians over rounds are reported. */
  readonly rounds: number;
  /** How many times the start-up figures (ready time, idle RSS) are taken. */
  readonly starts: number;
  readonly connections: number;
  /** Serial SSE requests per case and round; the first tenth warms up and is dropped. */
  readonly sseSamples: number;
  /** Case ids to run: BENCH_CASES, `all` for every case, the default cases when unset. */
  readonly cases: readonly string[];
  /** Another checkout whose toolgate is measured alternately with this one. */
  readonly baseline: string | undefined;
}

interface Knob {
  readonly key: keyof Omit<BenchConfig, 'cases' | 'baseline'>;
  readonly env: string;
  readonly default: number;
  readonly integer: boolean;
  readonly max: number;
}

const knobs: readonly Knob[] = [
  { key: 'seconds', env: 'BENCH_SECONDS', default: 2, integer: false, max: 600 },
  { key: 'rateSeconds', env: 'BENCH_RATE_SECONDS', default: 4, integer: false, max: 600 },
  { key: 'rate', env: 'BENCH_RATE', default: 600, integer: true, max: 1_000_000 },
  { key: 'warmupSeconds', env: 'BENCH_WARMUP_SECONDS', default: 0.5, integer: false, max: 600 },
  { key: 'latencySeconds', env: 'BENCH_LATENCY_SECONDS', default: 1, integer: false, max: 600 },
  { key: 'rounds', env: 'BENCH_ROUNDS', default: 4, integer: true, max: 100 },
  { key: 'starts', env: 'BENCH_STARTS', default: 5, integer: true, max: 100 },
  { key: 'connections', env: 'BENCH_CONNECTIONS', default: 32, integer: true, max: 1024 },
  { key: 'sseSamples', env: 'BENCH_SSE_SAMPLES', default: 100, integer: true, max: 100_000 },
];

export function loadConfig(
  env: NodeJS.ProcessEnv,
  knownCases: readonly string[],
  defaultCases: readonly string[],
): { ok: true; config: BenchConfig } | { ok: false; reason: string } {
  const out: Record<string, unknown> = {};
  for (const k of knobs) {
    const raw = env[k.env];
    if (raw === undefined || raw === '') {
      out[k.key] = k.default;
      continue;
    }
    const n = Number(raw);
    const valid = /^\d+(\.\d+)?$/.test(raw) && n > 0 && n <= k.max && (!k.integer || Number.isInteger(n));
    if (!valid)
      return {
        ok: false,
        reason: `invalid ${k.env}: expected a ${k.integer ? 'whole' : 'positive'} number up to ${k.max}`,
      };
    out[k.key] = n;
  }
  const rawCases = env.BENCH_CASES?.trim();
  if (rawCases === undefined || rawCases === '') {
    out.cases = Object.freeze([...defaultCases]);
  } else if (rawCases === 'all') {
    out.cases = Object.freeze([...knownCases]);
  } else {
    const ids = rawCases
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
    const unknown = ids.find((id) => !knownCases.includes(id));
    if (unknown !== undefined || ids.length === 0) {
      return {
        ok: false,
        reason: `invalid BENCH_CASES: expected all, or a comma-separated list of ${knownCases.join(', ')}`,
      };
    }
    out.cases = Object.freeze(ids);
  }
  out.baseline = env.BENCH_BASELINE === '' ? undefined : env.BENCH_BASELINE;
  return { ok: true, config: Object.freeze(out) as unknown as BenchConfig };
}
