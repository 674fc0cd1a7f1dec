import type { BenchConfig } from './config.ts';
import { load, type LoadRun } from './load.ts';
import { cpuMicros } from './procstat.ts';
import { STREAM_CALL, type BenchRequest } from './request.ts';
import { firstEventTimes } from './sse.ts';
import { median, percentile } from './stats.ts';
import { startStub, type Launcher, type Target } from './targets.ts';

/**
 * What one case measures: 'throughput' is req/s at BENCH_CONNECTIONS plus the
 * target's CPU time per request over that run; 'latency' is p50/p99 at one
 * connection; 'sse' is the median time to the first event of STREAM_CALL.
 */
type Measure = 'throughput' | 'latency' | 'sse';

export interface Case {
  readonly id: string;
  readonly label: string;
  /** Key into the launcher table; several cases may share one target. */
  readonly target: string;
  readonly request: BenchRequest;
  /** Status every measured response must carry; 200 responses must also match direct's body. */
  readonly expectStatus?: number;
  readonly measures: readonly Measure[];
  readonly sseRequest?: BenchRequest;
  /** Keys this case adds to the JSON line; may read any case's figures (absent if that case failed or was skipped). */
  readonly report: (r: Results) => Readonly<Record<string, number | null>>;
}

export interface Figures {
  readonly rps?: number;
  readonly cpuUsPerReq?: number;
  readonly p50Ms?: number;
  readonly p99Ms?: number;
  readonly sseFirstEventMs?: number;
}

/** Best figures over all rounds, by case id; only cases that ran cleanly. */
type Results = ReadonlyMap<string, Figures>;

export interface Outcome {
  readonly rounds: ReadonlyMap<string, readonly Figures[]>;
  readonly best: Results;
  readonly failed: ReadonlyMap<string, string>;
  readonly warnings: readonly string[];
}

type Log = (line: string) => void;

export async function runBenchmark(
  cases: readonly Case[],
  launchers: Readonly<Record<string, Launcher>>,
  config: BenchConfig,
  log: Log,
): Promise<Outcome> {
  const rounds = new Map<string, Figures[]>(cases.map((c) => [c.id, []]));
  const failed = new Map<string, string>();
  const warnings: string[] = [];
  const targets = new Map<string, Target>();
  const stub = await startStub();
  try {
    for (const c of cases) {
      if (targets.has(c.target)) continue;
      const launch = launchers[c.target];
      if (launch === undefined) throw new Error(`case ${c.id}: no launcher named ${c.target}`);
      log(`starting ${c.target}`);
      try {
        targets.set(c.target, await launch({ stub }));
      } catch (err) {
        for (const d of cases) if (d.target === c.target) failed.set(d.id, `could not start ${c.target}: ${(err as Error).message}`);
      }
    }
    for (const c of cases) {
      const target = targets.get(c.target);
      if (target === undefined || failed.has(c.id)) continue;
      const problem = await verify(c, stub, target);
      if (problem !== undefined) failed.set(c.id, problem);
    }
    for (let round = 0; round < config.rounds; round++) {
      // Alternate the order so slow drift (thermal, neighbours) does not always favour the same case.
      const order = round % 2 === 0 ? cases : [...cases].reverse();
      for (const c of order) {
        const target = targets.get(c.target);
        if (target === undefined || failed.has(c.id)) continue;
        try {
          const f = await measureCase(c, target, config);
          rounds.get(c.id)?.push(f);
          log(`round ${round + 1}/${config.rounds} ${c.id}: ${describe(f)}`);
        } catch (err) {
          failed.set(c.id, (err as Error).message);
          log(`round ${round + 1}/${config.rounds} ${c.id}: FAILED ${(err as Error).message}`);
        }
      }
    }
  } finally {
    for (const [name, t] of [...targets].reverse()) {
      if (t === stub) continue;
      const exit = await t.stop();
      if (t.gracefulExit && exit !== 0) warnings.push(`${name} exited with ${exit} after SIGTERM (expected 0)`);
    }
    await stub.stop();
  }
  const best = new Map<string, Figures>();
  for (const [id, rs] of rounds) if (!failed.has(id) && rs.length > 0) best.set(id, bestOf(rs));
  return { rounds, best, failed, warnings };
}

/** One answer through the target must equal the stub's own answer, before anything is timed. */
async function verify(c: Case, stub: Target, target: Target): Promise<string | undefined> {
  const expectStatus = c.expectStatus ?? 200;
  const requests = c.measures.includes('sse') ? [c.request, c.sseRequest ?? STREAM_CALL] : [c.request];
  for (const req of requests) {
    const got = await send(target.origin, req);
    if (got.status !== expectStatus) return `probe answered ${got.status}, expected ${expectStatus}`;
    if (expectStatus !== 200 || target === stub) continue;
    const want = await send(stub.origin, req);
    if (got.body !== want.body) return 'probe answer differs from the stub\'s own answer';
  }
  return undefined;
}

async function send(origin: string, req: BenchRequest): Promise<{ status: number; body: string }> {
  try {
    const res = await fetch(origin + req.path, {
      method: req.method, headers: req.headers, body: req.body, signal: AbortSignal.timeout(5000),
    });
    return { status: res.status, body: await res.text() };
  } catch {
    return { status: 0, body: '' };
  }
}

async function measureCase(c: Case, target: Target, config: BenchConfig): Promise<Figures> {
  const url = target.origin + c.request.path;
  const expectStatus = c.expectStatus ?? 200;
  const f: { -readonly [K in keyof Figures]: Figures[K] } = {};
  checked(await load(url, c.request, { connections: config.connections, seconds: config.warmupSeconds, expectStatus }));
  if (c.measures.includes('throughput')) {
    const before = cpuMicros(target.pid);
    const run = checked(await load(url, c.request, { connections: config.connections, seconds: config.seconds, expectStatus }));
    const after = cpuMicros(target.pid);
    f.rps = run.rps;
    if (before !== undefined && after !== undefined && run.requests > 0) f.cpuUsPerReq = (after - before) / run.requests;
  }
  if (c.measures.includes('latency')) {
    const run = checked(await load(url, c.request, {
      connections: 1, seconds: config.latencySeconds, expectStatus, recordLatencies: true,
    }));
    f.p50Ms = percentile(run.latenciesMs, 50);
    f.p99Ms = percentile(run.latenciesMs, 99);
  }
  if (c.measures.includes('sse')) {
    const req = c.sseRequest ?? STREAM_CALL;
    const run = await firstEventTimes(target.origin + req.path, req, config.sseSamples);
    if (run.failures > 0) throw new Error(`${run.failures} of ${config.sseSamples} SSE requests failed`);
    f.sseFirstEventMs = median(run.firstEventMs.slice(Math.floor(run.firstEventMs.length / 10)));
  }
  return f;
}

function checked(run: LoadRun): LoadRun {
  if (run.failures > 0) {
    throw new Error(`${run.failures} of ${run.requests} requests failed (connection error, timeout or unexpected status)`);
  }
  return run;
}

/**
 * Noise on a shared machine only ever takes throughput away and adds time, so
 * each figure's best round (highest req/s, lowest times) is the least
 * disturbed estimate of what the code itself costs.
 */
function bestOf(rounds: readonly Figures[]): Figures {
  const pick = (key: keyof Figures, choose: (...xs: number[]) => number) => {
    const xs = rounds.map((r) => r[key]).filter((x): x is number => x !== undefined && Number.isFinite(x));
    return xs.length > 0 ? choose(...xs) : undefined;
  };
  return {
    rps: pick('rps', Math.max),
    cpuUsPerReq: pick('cpuUsPerReq', Math.min),
    p50Ms: pick('p50Ms', Math.min),
    p99Ms: pick('p99Ms', Math.min),
    sseFirstEventMs: pick('sseFirstEventMs', Math.min),
  };
}

function describe(f: Figures): string {
  const parts: string[] = [];
  if (f.rps !== undefined) parts.push(`${Math.round(f.rps)} req/s`);
  if (f.cpuUsPerReq !== undefined) parts.push(`${f.cpuUsPerReq.toFixed(1)} µs CPU/req`);
  if (f.p50Ms !== undefined && f.p99Ms !== undefined) parts.push(`p50 ${f.p50Ms.toFixed(3)} ms, p99 ${f.p99Ms.toFixed(3)} ms`);
  if (f.sseFirstEventMs !== undefined) parts.push(`SSE first event ${f.sseFirstEventMs.toFixed(3)} ms`);
  return parts.join(', ');
}

/** Rounding helpers for report functions; each yields null when an input is missing. */
export const fig = {
  rps: (v: number | undefined): number | null => (v === undefined ? null : Math.round(v)),
  us: (v: number | undefined): number | null => (v === undefined ? null : Math.round(v * 10) / 10),
  ratio: (a: number | undefined, b: number | undefined): number | null =>
    a === undefined || b === undefined || b === 0 ? null : Math.round((a / b) * 1000) / 1000,
  addedMs: (a: number | undefined, b: number | undefined): number | null =>
    a === undefined || b === undefined ? null : Math.round((a - b) * 1000) / 1000,
};
