import { isDeepStrictEqual } from 'node:util';
import type { Build } from './build.ts';
import type { BenchConfig } from './config.ts';
import { load, type LoadRun } from './load.ts';
import { paced } from './paced.ts';
import { cpuMicros, rssMb } from './procstat.ts';
import { STREAM_CALL, unrotated, type BenchRequest } from './request.ts';
import { firstEventTimes } from './sse.ts';
import { median, percentile, spreadOf, type Spread } from './stats.ts';
import { startStub, type Launcher, type StartContext, type Target } from './targets.ts';

/**
 * What one case measures: 'throughput' is req/s at BENCH_CONNECTIONS plus the
 * target's CPU time per request and its RSS after that run; 'latency' is
 * p50/p99 at one connection; 'sse' is the median time to the first event of
 * STREAM_CALL.
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
  /** For a target that edits the answer on purpose (the result guard): what its answer must contain instead of equalling direct's. */
  readonly expectInAnswer?: string;
  readonly measures: readonly Measure[];
  /**
   * Measured in paired rounds with the floor (and, with BENCH_BASELINE, with
   * the same case on the baseline build): each round loads them side by side
   * at the fixed rate and at saturation, and the round's ratios are taken
   * between those neighbours.
   */
  readonly cpuVsFloor?: boolean;
  readonly sseRequest?: BenchRequest;
  /** A call the policy denies: each target must refuse it (not answer as the stub does) before anything is timed. */
  readonly refused?: BenchRequest;
  /**
   * Another target measured in every round of this cpuVsFloor case, side by
   * side with it and the floor: two gateways given the same work, compared
   * per round. Its figures are reported under `id`. In a `firstPass` case,
   * the target it is compared with, alone, in the same rounds.
   */
  readonly partner?: { readonly id: string; readonly target: string };
  /**
   * A cost paid once per credential, measured from fresh processes (instead
   * of `measures` and the floor): every round starts the case's target and
   * its `partner` anew, one after the other (the first alternates), warms
   * each up with the request fixed at its first rotated value, then sends one
   * pass of as many requests as the case's target rotates values, at the
   * fixed rate, timing every answer (p50, p99, CPU per request), and then
   * saturates it for req/s and RSS. Each figure is also taken as the case's ÷
   * the partner's per round (`passRatio`).
   */
  readonly firstPass?: boolean;
  /** Offered req/s of this case's fixed-rate runs instead of BENCH_RATE, for a peer that saturates below it. */
  readonly rate?: number;
  /**
   * Connections of this case's load instead of BENCH_CONNECTIONS, for every
   * target of the case alike: for a peer so slow per call that, with every
   * connection's request in flight at once, hardly any finishes within a run.
   */
  readonly connections?: number;
  /** Keys this case adds to the JSON line; may read any case's figures (absent if that case failed or was skipped). */
  readonly report: (r: Summary) => Readonly<Record<string, number | null>>;
}

export interface Figures {
  readonly rps?: number;
  /** CPU µs per request at saturation. */
  readonly cpuUsPerReq?: number;
  /** CPU µs per request at the fixed offered rate. */
  readonly cpuUsAtRate?: number;
  /** CPU µs per request at saturation while the paired floor is saturated on the same CPU. */
  readonly cpuUsSideBySide?: number;
  /** RSS right after the saturation run. */
  readonly rssLoadedMb?: number;
  readonly p50Ms?: number;
  readonly p99Ms?: number;
  /** p50 and p99 minus the stub's own, measured in the same round (cases with a partner). */
  readonly p50AddedMs?: number;
  readonly p99AddedMs?: number;
  readonly sseFirstEventMs?: number;
  /** Spawn to ready (firstPass cases, started anew each round). */
  readonly readyMs?: number;
}

/** Start-up figures: one sample per start. */
export interface Startup {
  readonly readyMs: readonly number[];
  readonly rssIdleMb: readonly number[];
  readonly floorRssIdleMb: readonly number[];
  readonly catalogueRssIdleMb: readonly number[];
}

interface Summary {
  /** Per case, each figure's median over rounds. */
  readonly figures: ReadonlyMap<string, Figures>;
  /** Per cpuVsFloor case: CPU at the fixed rate ÷ the floor's, per round. */
  readonly cpuRatio: ReadonlyMap<string, Spread>;
  /** The same at saturation. */
  readonly cpuRatioSaturated: ReadonlyMap<string, Spread>;
  /**
   * Per cpuVsFloor case: req/s alone ÷ the floor's, per round. Cases run one
   * after another, minutes apart, so two cases' figures are compared through
   * these (and cpuRatio), never through their raw medians.
   */
  readonly rpsRatio: ReadonlyMap<string, Spread>;
  /** Per cpuVsFloor case: CPU at the fixed rate ÷ the baseline build's, per round (only with BENCH_BASELINE). */
  readonly vsBaseline: ReadonlyMap<string, Spread>;
  /** The same at saturation, side by side: the work per request without the fixed rate's wake-ups. */
  readonly vsBaselineSaturated: ReadonlyMap<string, Spread>;
  /** Per case with a partner: the partner's CPU ÷ the case's own, per round, at the fixed rate and saturated side by side. */
  readonly partnerRatio: ReadonlyMap<string, Spread>;
  readonly partnerRatioSaturated: ReadonlyMap<string, Spread>;
  /**
   * Per cpuVsFloor case: the floor's own figures (medians) from that case's
   * rounds only, e.g. its RSS right after the same rounds' saturation runs.
   * `figures.get('floor')` pools the floor's rounds of every case.
   */
  readonly floorBeside: ReadonlyMap<string, Figures>;
  /** Per firstPass case: its p99, CPU per request over the pass, and loaded RSS, each ÷ its partner's, per round. */
  readonly passRatio: ReadonlyMap<string, { readonly p99?: Spread; readonly cpu?: Spread; readonly rss?: Spread }>;
  readonly startup: {
    readonly readyMs?: Spread;
    readonly rssIdleMb?: Spread;
    readonly floorRssIdleMb?: Spread;
    readonly catalogueRssIdleMb?: Spread;
  };
}

export interface Outcome {
  readonly rounds: ReadonlyMap<string, readonly Figures[]>;
  readonly summary: Summary;
  readonly failed: ReadonlyMap<string, string>;
  readonly warnings: readonly string[];
}

type Log = (line: string) => void;

const FIRST_WARMUP_SECONDS = 2;

/** What one round of a cpuVsFloor case yields besides the case's own figures. */
interface PairRatios {
  rate: number[];
  saturated: number[];
  /** req/s alone ÷ the floor's, both from the same round. */
  rps: number[];
  baseline: number[];
  baselineSaturated: number[];
  /** The partner's CPU ÷ the case's own. */
  partner: number[];
  partnerSaturated: number[];
  /** The floor's own figures from the same round. */
  floor: Figures[];
}

export async function runBenchmark(
  cases: readonly Case[],
  launchers: Readonly<Record<string, Launcher>>,
  benchConfig: BenchConfig,
  builds: { readonly own: Build; readonly baseline?: Build },
  startupPhase: ((ctx: StartContext) => Promise<Startup>) | undefined,
  log: Log,
): Promise<Outcome> {
  const rounds = new Map<string, Figures[]>(
    cases.flatMap((c) => [c.id, ...(c.partner === undefined ? [] : [c.partner.id])]).map((id) => [id, []]),
  );
  const pairs = new Map<string, PairRatios>(
    cases
      .filter((c) => c.cpuVsFloor)
      .map((c) => [
        c.id,
        {
          rate: [],
          saturated: [],
          rps: [],
          baseline: [],
          baselineSaturated: [],
          partner: [],
          partnerSaturated: [],
          floor: [],
        },
      ]),
  );
  const passes = new Map<string, { p99: number[]; cpu: number[]; rss: number[] }>(
    cases.filter((c) => c.firstPass).map((c) => [c.id, { p99: [], cpu: [], rss: [] }]),
  );
  const failed = new Map<string, string>();
  const warnings: string[] = [];
  const targets = new Map<string, Target>();
  const stub = await startStub();
  const ownCtx: StartContext = { stub, cli: builds.own.cli, cliEnv: builds.own.env, floor: builds.own.floor };
  const startTarget = async (key: string, launcherName: string, ctx: StartContext): Promise<void> => {
    if (targets.has(key)) return;
    const launch = launchers[launcherName];
    if (launch === undefined) throw new Error(`no launcher named ${launcherName}`);
    log(`starting ${key}`);
    targets.set(key, await launch(ctx));
  };
  /**
   * A fresh process interprets before it compiles: one longer warm-up before
   * round 1, the floor's included, then (for a paired case) a whole round
   * whose figures are dropped. Without it the first two rounds of a pair
   * read up to 2× off, and they decided the spread.
   */
  const measureRounds = async (c: Case, target: Target): Promise<void> => {
    const config = c.connections === undefined ? benchConfig : { ...benchConfig, connections: c.connections };
    const floor = targets.get('floor');
    const baseline = targets.get(`${c.target}@baseline`);
    const partner = c.partner === undefined ? undefined : targets.get(c.partner.target);
    for (const t of [target, baseline, partner, ...(c.cpuVsFloor ? [floor] : [])]) {
      if (t === undefined) continue;
      const req = requestFor(t, c.request);
      await load(t.origin + req.path, req, {
        connections: config.connections,
        seconds: FIRST_WARMUP_SECONDS,
        expectStatus: c.expectStatus ?? 200,
      });
    }
    const others = { baseline, partner };
    if (c.cpuVsFloor) await measurePair(c, target, floor as Target, others, 0, config).catch(() => undefined);
    for (let round = 0; round < config.rounds; round++) {
      try {
        if (c.cpuVsFloor) {
          const r = await measurePair(c, target, floor as Target, others, round, config);
          rounds.get('floor')?.push(r.floor);
          const ratios = pairs.get(c.id) as PairRatios;
          ratios.floor.push(r.floor);
          pushRatio(ratios.rate, r.own.cpuUsAtRate, r.floor.cpuUsAtRate);
          pushRatio(ratios.saturated, r.own.cpuUsSideBySide, r.floor.cpuUsSideBySide);
          pushRatio(ratios.rps, r.own.rps, r.floor.rps);
          if (r.baseline !== undefined) {
            pushRatio(ratios.baseline, r.own.cpuUsAtRate, r.baseline.cpuUsAtRate);
            pushRatio(ratios.baselineSaturated, r.own.cpuUsSideBySide, r.baseline.cpuUsSideBySide);
          }
          let own: Figures = { ...r.own, ...(await measureCase(c, target, config, ['latency', 'sse'])) };
          let partnerFigures: Figures | undefined;
          if (r.partner !== undefined && c.partner !== undefined && partner !== undefined) {
            pushRatio(ratios.partner, r.partner.cpuUsAtRate, r.own.cpuUsAtRate);
            pushRatio(ratios.partnerSaturated, r.partner.cpuUsSideBySide, r.own.cpuUsSideBySide);
            // Latency over direct from the same minutes: the stub's own, serially, right after both gateways'.
            const theirs = await measureCase(c, partner, config, ['latency']);
            const direct = await measureCase(c, stub, config, ['latency']);
            own = { ...own, ...added(own, direct) };
            partnerFigures = { ...r.partner, ...theirs, ...added(theirs, direct) };
            rounds.get(c.partner.id)?.push(partnerFigures);
          }
          rounds.get(c.id)?.push(own);
          log(
            `round ${round + 1}/${config.rounds} ${c.id}: ${describe(own)}; floor ${describe(r.floor)}` +
              (r.baseline === undefined ? '' : `; baseline ${describe(r.baseline)}`) +
              (partnerFigures === undefined ? '' : `; ${c.partner?.id} ${describe(partnerFigures)}`),
          );
        } else {
          const f = await measureCase(c, target, config, c.measures);
          rounds.get(c.id)?.push(f);
          log(`round ${round + 1}/${config.rounds} ${c.id}: ${describe(f)}`);
        }
      } catch (err) {
        failed.set(c.id, (err as Error).message);
        log(`round ${round + 1}/${config.rounds} ${c.id}: FAILED ${(err as Error).message}`);
        return;
      }
    }
  };
  /** A firstPass case's rounds: fresh processes, one after the other, each stopped before the next starts. */
  const measureFirstPasses = async (c: Case): Promise<void> => {
    if (c.partner === undefined) throw new Error(`${c.id}: a firstPass case needs a partner`);
    const slots: Array<[string, string]> = [
      [c.id, c.target],
      [c.partner.id, c.partner.target],
    ];
    const launch = (name: string): Launcher => {
      const l = launchers[name];
      if (l === undefined) throw new Error(`no launcher named ${name}`);
      return l;
    };
    let passLength: number | undefined;
    for (let round = 0; round < benchConfig.rounds; round++) {
      const shift = round % slots.length;
      const got = new Map<string, Figures>();
      for (const [id, launcherName] of [...slots.slice(shift), ...slots.slice(0, shift)]) {
        log(`starting ${id}`);
        const t = await launch(launcherName)(ownCtx);
        try {
          if (round === 0) {
            const problem = await verify(c, stub, t);
            if (problem !== undefined) throw new Error(`${t.name}: ${problem}`);
          }
          if (id === c.id) passLength ??= requestFor(t, c.request).rotate?.values.length;
          if (passLength === undefined)
            throw new Error(`${c.id}: its target rotates no values, so a pass has no length`);
          got.set(id, {
            ...(await firstPass(c, t, passLength, benchConfig)),
            ...(t.readyMs === undefined ? {} : { readyMs: t.readyMs }),
          });
        } finally {
          const exit = await t.stop();
          if (t.gracefulExit && exit !== 0) warnings.push(`${id} exited with ${exit} after SIGTERM (expected 0)`);
        }
      }
      const own = got.get(c.id) as Figures;
      const other = got.get(c.partner.id) as Figures;
      rounds.get(c.id)?.push(own);
      rounds.get(c.partner.id)?.push(other);
      const r = passes.get(c.id) as { p99: number[]; cpu: number[]; rss: number[] };
      pushRatio(r.p99, own.p99Ms, other.p99Ms);
      pushRatio(r.cpu, own.cpuUsAtRate, other.cpuUsAtRate);
      pushRatio(r.rss, own.rssLoadedMb, other.rssLoadedMb);
      log(`round ${round + 1}/${benchConfig.rounds} ${c.id}: ${describe(own)}; ${c.partner.id} ${describe(other)}`);
    }
  };
  let startup: Startup | undefined;
  try {
    if (startupPhase !== undefined) {
      log('start-up figures');
      const began = performance.now();
      // A start that fails (or is too slow on a starved machine) costs its figures, not the run.
      startup = await startupPhase(ownCtx).catch((err: unknown) => {
        warnings.push(`start-up figures not measured: ${(err as Error).message.split('\n')[0]}`);
        return undefined;
      });
      log(`start-up figures took ${seconds(began)} s`);
    }
    if (cases.some((c) => c.cpuVsFloor)) await startTarget('floor', 'floor', ownCtx);
    // One case at a time: its targets live only for its own rounds. Idle
    // proxies are not idle (a catalogue re-sync, a span batch, a timer), and
    // beside a measured pair on its CPU they read as that pair's noise.
    for (const [index, c] of cases.entries()) {
      const began = performance.now();
      const baseline = c.cpuVsFloor ? builds.baseline : undefined;
      const keys = [
        c.target,
        ...(baseline === undefined ? [] : [`${c.target}@baseline`]),
        ...(c.partner === undefined ? [] : [c.partner.target]),
      ];
      if (c.firstPass) {
        await measureFirstPasses(c).catch((err: unknown) => {
          failed.set(c.id, (err as Error).message);
          if (c.partner !== undefined) failed.set(c.partner.id, `${c.id} failed`);
          log(`${c.id}: FAILED ${(err as Error).message}`);
        });
        log(`${c.id} took ${seconds(began)} s`);
        continue;
      }
      try {
        await startTarget(c.target, c.target, ownCtx);
        if (baseline !== undefined)
          await startTarget(`${c.target}@baseline`, c.target, {
            ...ownCtx,
            cli: baseline.cli,
            cliEnv: baseline.env,
            baseline: true,
          });
        if (c.partner !== undefined) await startTarget(c.partner.target, c.partner.target, ownCtx);
        const target = targets.get(c.target) as Target;
        for (const t of [target, ...(c.partner === undefined ? [] : [targets.get(c.partner.target) as Target])]) {
          const problem = await verify(c, stub, t);
          if (problem !== undefined) throw new Error(`${t.name}: ${problem}`);
        }
        await measureRounds(c, target);
      } catch (err) {
        if (!failed.has(c.id)) failed.set(c.id, `could not start ${c.target}: ${(err as Error).message}`);
        if (c.partner !== undefined && !failed.has(c.partner.id)) failed.set(c.partner.id, `${c.id} failed`);
      }
      const later = new Set(cases.slice(index + 1).map((x) => x.target));
      for (const key of keys) {
        const t = targets.get(key);
        if (t === undefined || t === stub || key === 'floor' || later.has(key)) continue;
        targets.delete(key);
        const exit = await t.stop();
        if (t.gracefulExit && exit !== 0) warnings.push(`${key} exited with ${exit} after SIGTERM (expected 0)`);
      }
      // Wall time per case, start and stop included: what leaving it out of BENCH_CASES saves.
      log(`${c.id} took ${seconds(began)} s`);
    }
  } finally {
    for (const [name, t] of [...targets].reverse()) {
      const exit = await t.stop();
      if (t.gracefulExit && exit !== 0) warnings.push(`${name} exited with ${exit} after SIGTERM (expected 0)`);
    }
    await stub.stop();
  }
  return { rounds, summary: summarise(rounds, pairs, passes, failed, startup), failed, warnings };
}

/**
 * One fresh target's first pass: a warm-up with the request fixed at its
 * first rotated value, `length` requests at the fixed rate (each rotated
 * value once, so every other credential is used for the first time), timed
 * one by one, then a saturation run for req/s and RSS.
 */
async function firstPass(c: Case, target: Target, length: number, config: BenchConfig): Promise<Figures> {
  const req = requestFor(target, c.request);
  const expectStatus = c.expectStatus ?? 200;
  const connections = c.connections ?? config.connections;
  checked(
    await load(target.origin + req.path, unrotated(req), { connections, seconds: FIRST_WARMUP_SECONDS, expectStatus }),
  );
  const rate = c.rate ?? config.rate;
  const [pass] = await cpuOver([target], () =>
    paced([{ origin: target.origin, req }], {
      connections,
      seconds: length / rate,
      rate,
      expectStatus,
      recordLatencies: true,
    }),
  );
  const latencies = pass?.run.latenciesMs ?? [];
  return {
    ...(pass?.usPerReq === undefined ? {} : { cpuUsAtRate: pass.usPerReq }),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    ...(await measureSaturated(c, target, config)),
  };
}

/** Whole seconds since `began` (a performance.now() reading). */
function seconds(began: number): string {
  return ((performance.now() - began) / 1000).toFixed(0);
}

function added(f: Figures, direct: Figures): Figures {
  return {
    ...(f.p50Ms === undefined || direct.p50Ms === undefined ? {} : { p50AddedMs: f.p50Ms - direct.p50Ms }),
    ...(f.p99Ms === undefined || direct.p99Ms === undefined ? {} : { p99AddedMs: f.p99Ms - direct.p99Ms }),
  };
}

function pushRatio(into: number[], a: number | undefined, b: number | undefined): void {
  if (a !== undefined && b !== undefined && b > 0) into.push(a / b);
}

/**
 * One round of a cpuVsFloor case: the case, the floor and (if any) the
 * baseline, all on the proxies' CPU. At the fixed rate and then saturated,
 * all of them take their load at the same time, so whatever else the machine
 * is doing in those seconds (neighbours, steal time, frequency changes) lands
 * on each alike and cancels in the ratio; then each alone, in an order that
 * rotates with the round, for req/s and RSS.
 */
async function measurePair(
  c: Case,
  own: Target,
  floor: Target,
  others: { baseline?: Target | undefined; partner?: Target | undefined },
  round: number,
  config: BenchConfig,
): Promise<{ own: Figures; floor: Figures; baseline?: Figures; partner?: Figures }> {
  type Role = 'own' | 'floor' | 'baseline' | 'partner';
  const slots: Array<[Role, Target]> = [
    ['own', own],
    ['floor', floor],
  ];
  if (others.baseline !== undefined) slots.push(['baseline', others.baseline]);
  if (others.partner !== undefined) slots.push(['partner', others.partner]);
  const shift = round % slots.length;
  const order = [...slots.slice(shift), ...slots.slice(0, shift)];
  const expectStatus = c.expectStatus ?? 200;
  const out: Partial<Record<Role, { -readonly [K in keyof Figures]: Figures[K] }>> = {};
  const targets = order.map(([, t]) => t);
  // Warmed side by side, like the runs that follow, so none of them comes to those runs from a
  // longer idle (a toolgate idle for its trim window has trimmed its heap) or a fresher burst.
  const warmed = await Promise.all(
    targets.map((t) => {
      const req = requestFor(t, c.request);
      return load(t.origin + req.path, req, {
        connections: config.connections,
        seconds: config.warmupSeconds,
        expectStatus,
      });
    }),
  );
  for (const run of warmed) checked(run);
  const atRate = await cpuOver(targets, () =>
    paced(
      targets.map((t) => ({ origin: t.origin, req: requestFor(t, c.request) })),
      {
        connections: config.connections,
        seconds: config.rateSeconds,
        rate: c.rate ?? config.rate,
        expectStatus,
      },
    ),
  );
  // Saturated side by side too: on one CPU each gets its share of whatever that CPU delivers in those seconds.
  const saturated = await cpuOver(targets, () =>
    Promise.all(
      targets.map((t) => {
        const req = requestFor(t, c.request);
        return load(t.origin + req.path, req, {
          connections: config.connections,
          seconds: config.seconds,
          expectStatus,
        });
      }),
    ),
  );
  order.forEach(([role], i) => {
    const rate = atRate[i]?.usPerReq;
    const sat = saturated[i]?.usPerReq;
    out[role] = {
      ...(rate === undefined ? {} : { cpuUsAtRate: rate }),
      ...(sat === undefined ? {} : { cpuUsSideBySide: sat }),
    };
  });
  for (const [role, target] of order) Object.assign(out[role] ?? {}, await measureSaturated(c, target, config));
  return {
    own: out.own as Figures,
    floor: out.floor as Figures,
    ...(out.baseline === undefined ? {} : { baseline: out.baseline }),
    ...(out.partner === undefined ? {} : { partner: out.partner }),
  };
}

async function measureSaturated(c: Case, target: Target, config: BenchConfig): Promise<Figures> {
  const req = requestFor(target, c.request);
  const url = target.origin + req.path;
  const expectStatus = c.expectStatus ?? 200;
  checked(await load(url, req, { connections: config.connections, seconds: config.warmupSeconds, expectStatus }));
  const [saturated] = await cpuOver([target], async () => [
    await load(url, req, { connections: config.connections, seconds: config.seconds, expectStatus }),
  ]);
  const rss = rssOf(target);
  return {
    rps: saturated?.run.rps,
    ...(saturated?.usPerReq === undefined ? {} : { cpuUsPerReq: saturated.usPerReq }),
    ...(rss === undefined ? {} : { rssLoadedMb: rss }),
  };
}

/** Each target's CPU µs per request over `run`, which loads them all and yields one run per target, in order. */
async function cpuOver(
  targets: readonly Target[],
  run: () => Promise<LoadRun[]>,
): Promise<Array<{ run: LoadRun; usPerReq?: number }>> {
  const before = targets.map(cpuOf);
  const runs = await run();
  return targets.map((t, i) => {
    const r = checked(runs[i] as LoadRun);
    const b = before[i];
    const a = cpuOf(t);
    return b === undefined || a === undefined || r.requests === 0
      ? { run: r }
      : { run: r, usPerReq: (a - b) / r.requests };
  });
}

/** The request as `target` takes it. */
function requestFor(target: Target, req: BenchRequest): BenchRequest {
  return target.adapt?.(req) ?? req;
}

/** CPU µs of every process of the target, summed; undefined when its main process is gone. */
function cpuOf(target: Target): number | undefined {
  if (target.processes === undefined) return cpuMicros(target.pid);
  const each = target.processes().map(cpuMicros);
  return each[0] === undefined ? undefined : each.reduce<number>((sum, us) => sum + (us ?? 0), 0);
}

/** RSS of every process of the target, summed (pages shared between forked workers count once per process). */
function rssOf(target: Target): number | undefined {
  if (target.processes === undefined) return rssMb(target.pid);
  const each = target.processes().map(rssMb);
  return each[0] === undefined ? undefined : each.reduce<number>((sum, mb) => sum + (mb ?? 0), 0);
}

/**
 * One answer through the target must equal the stub's own answer, and a call
 * the policy denies must not, before anything is timed.
 */
async function verify(c: Case, stub: Target, target: Target): Promise<string | undefined> {
  const expectStatus = c.expectStatus ?? 200;
  if (c.refused !== undefined) {
    const got = await send(target.origin, requestFor(target, c.refused));
    const want = await send(stub.origin, c.refused);
    if (got.status === want.status && got.body === want.body)
      return 'a call the policy denies was answered as the stub answers it';
  }
  const requests = c.measures.includes('sse') ? [c.request, c.sseRequest ?? STREAM_CALL] : [c.request];
  for (const original of requests) {
    const req = requestFor(target, original);
    const got = await send(target.origin, req);
    if (got.status !== expectStatus) return `probe answered ${got.status}, expected ${expectStatus}`;
    if (expectStatus !== 200 || target === stub) continue;
    if (c.expectInAnswer !== undefined) {
      if (!got.body.includes(c.expectInAnswer)) return `probe answer lacks ${c.expectInAnswer}`;
      continue;
    }
    const want = await send(stub.origin, original);
    if (!sameAnswer(got.body, want.body, target.answersReserialized === true))
      return `probe answer differs from the stub's own answer: ${got.body.slice(0, 200)}`;
  }
  return undefined;
}

function sameAnswer(got: string, want: string, asJson: boolean): boolean {
  if (got === want) return true;
  if (!asJson) return false;
  try {
    return isDeepStrictEqual(JSON.parse(got), JSON.parse(want));
  } catch {
    return false;
  }
}

async function send(origin: string, req: BenchRequest): Promise<{ status: number; body: string }> {
  try {
    const res = await fetch(origin + req.path, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: AbortSignal.timeout(5000),
    });
    return { status: res.status, body: await res.text() };
  } catch {
    return { status: 0, body: '' };
  }
}

async function measureCase(
  c: Case,
  target: Target,
  config: BenchConfig,
  measures: readonly Measure[],
): Promise<Figures> {
  const req = requestFor(target, c.request);
  const url = target.origin + req.path;
  const expectStatus = c.expectStatus ?? 200;
  const f: { -readonly [K in keyof Figures]: Figures[K] } = {};
  if (measures.includes('throughput')) Object.assign(f, await measureSaturated(c, target, config));
  if (measures.includes('latency') && c.measures.includes('latency')) {
    const run = checked(
      await load(url, req, {
        connections: 1,
        seconds: config.latencySeconds,
        expectStatus,
        recordLatencies: true,
      }),
    );
    f.p50Ms = percentile(run.latenciesMs, 50);
    f.p99Ms = percentile(run.latenciesMs, 99);
  }
  if (measures.includes('sse') && c.measures.includes('sse')) {
    const stream = requestFor(target, c.sseRequest ?? STREAM_CALL);
    const run = await firstEventTimes(target.origin + stream.path, stream, config.sseSamples);
    if (run.failures > 0) throw new Error(`${run.failures} of ${config.sseSamples} SSE requests failed`);
    f.sseFirstEventMs = median(run.firstEventMs.slice(Math.floor(run.firstEventMs.length / 10)));
  }
  return f;
}

function checked(run: LoadRun): LoadRun {
  if (run.failures > 0) {
    throw new Error(
      `${run.failures} of ${run.requests} requests failed (connection error, timeout or unexpected status)`,
    );
  }
  return run;
}

const FIGURE_KEYS = [
  'rps',
  'cpuUsPerReq',
  'cpuUsAtRate',
  'cpuUsSideBySide',
  'rssLoadedMb',
  'p50Ms',
  'p99Ms',
  'p50AddedMs',
  'p99AddedMs',
  'sseFirstEventMs',
  'readyMs',
] as const;

/** Medians over rounds: a shared machine's noise goes both ways once each round is paired with the floor. */
function summarise(
  rounds: ReadonlyMap<string, readonly Figures[]>,
  pairs: ReadonlyMap<string, PairRatios>,
  passes: ReadonlyMap<string, { readonly p99: number[]; readonly cpu: number[]; readonly rss: number[] }>,
  failed: ReadonlyMap<string, string>,
  startup: Startup | undefined,
): Summary {
  const figures = new Map<string, Figures>();
  for (const [id, rs] of rounds) {
    if (failed.has(id) || rs.length === 0) continue;
    figures.set(id, medians(rs));
  }
  const floorBeside = new Map<string, Figures>();
  for (const [id, p] of pairs) {
    if (!failed.has(id) && p.floor.length > 0) floorBeside.set(id, medians(p.floor));
  }
  const ratios = (pick: (p: PairRatios) => number[]) => {
    const out = new Map<string, Spread>();
    for (const [id, p] of pairs) {
      const s = failed.has(id) ? undefined : spreadOf(pick(p));
      if (s !== undefined) out.set(id, s);
    }
    return out;
  };
  return {
    figures,
    cpuRatio: ratios((p) => p.rate),
    cpuRatioSaturated: ratios((p) => p.saturated),
    rpsRatio: ratios((p) => p.rps),
    vsBaseline: ratios((p) => p.baseline),
    vsBaselineSaturated: ratios((p) => p.baselineSaturated),
    partnerRatio: ratios((p) => p.partner),
    partnerRatioSaturated: ratios((p) => p.partnerSaturated),
    floorBeside,
    passRatio: new Map(
      [...passes]
        .filter(([id]) => !failed.has(id))
        .map(([id, p]) => [
          id,
          {
            ...optional('p99', spreadOf(p.p99)),
            ...optional('cpu', spreadOf(p.cpu)),
            ...optional('rss', spreadOf(p.rss)),
          },
        ]),
    ),
    startup:
      startup === undefined
        ? {}
        : {
            ...optional('readyMs', spreadOf(startup.readyMs)),
            ...optional('rssIdleMb', spreadOf(startup.rssIdleMb)),
            ...optional('floorRssIdleMb', spreadOf(startup.floorRssIdleMb)),
            ...optional('catalogueRssIdleMb', spreadOf(startup.catalogueRssIdleMb)),
          },
  };
}

/** Each figure's median over rounds (figures a round lacks are left out). */
function medians(rs: readonly Figures[]): Figures {
  const f: Record<string, number> = {};
  for (const key of FIGURE_KEYS) {
    const m = spreadOf(rs.map((r) => r[key]).filter((x): x is number => x !== undefined));
    if (m !== undefined) f[key] = m.median;
  }
  return f;
}

function optional<K extends string>(key: K, v: Spread | undefined): Partial<Record<K, Spread>> {
  return v === undefined ? {} : ({ [key]: v } as Record<K, Spread>);
}

function describe(f: Figures): string {
  const parts: string[] = [];
  if (f.cpuUsAtRate !== undefined) parts.push(`${f.cpuUsAtRate.toFixed(1)} µs CPU/req at rate`);
  if (f.cpuUsSideBySide !== undefined) parts.push(`${f.cpuUsSideBySide.toFixed(1)} µs CPU/req saturated side by side`);
  if (f.rps !== undefined) parts.push(`${Math.round(f.rps)} req/s`);
  if (f.cpuUsPerReq !== undefined) parts.push(`${f.cpuUsPerReq.toFixed(1)} µs CPU/req saturated`);
  if (f.p50Ms !== undefined && f.p99Ms !== undefined)
    parts.push(`p50 ${f.p50Ms.toFixed(3)} ms, p99 ${f.p99Ms.toFixed(3)} ms`);
  if (f.sseFirstEventMs !== undefined) parts.push(`SSE first event ${f.sseFirstEventMs.toFixed(3)} ms`);
  if (f.rssLoadedMb !== undefined) parts.push(`RSS ${f.rssLoadedMb.toFixed(1)} MB`);
  if (f.readyMs !== undefined) parts.push(`ready in ${f.readyMs.toFixed(0)} ms`);
  return parts.join(', ');
}

/** Rounding helpers for report functions; each yields null when an input is missing. */
export const fig = {
  rps: (v: number | undefined): number | null => (v === undefined ? null : Math.round(v)),
  us: (v: number | undefined): number | null => (v === undefined ? null : Math.round(v * 10) / 10),
  mb: (v: number | undefined): number | null => (v === undefined ? null : Math.round(v * 10) / 10),
  ms: (v: number | undefined): number | null => (v === undefined ? null : Math.round(v)),
  ratio: (a: number | undefined, b: number | undefined): number | null =>
    a === undefined || b === undefined || b === 0 ? null : Math.round((a / b) * 1000) / 1000,
  addedMs: (a: number | undefined, b: number | undefined): number | null =>
    a === undefined || b === undefined ? null : Math.round((a - b) * 1000) / 1000,
  /** `<key>` (the median) and `<key>_spread` (its interquartile range), three decimals unless `round` says otherwise. */
  spread: (
    key: string,
    s: Spread | undefined,
    round: (v: number | undefined) => number | null = r3,
  ): Record<string, number | null> => ({
    [key]: round(s?.median),
    [`${key}_spread`]: round(s?.spread),
  }),
};

function r3(v: number | undefined): number | null {
  return v === undefined ? null : Math.round(v * 1000) / 1000;
}
