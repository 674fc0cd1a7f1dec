/**
 * `npm run bench`: toolgate against direct access, the floor (the least any
 * policy proxy must do) and the peer (http-proxy), all in one process tree on
 * loopback. Primary figures are CPU µs per request of the proxy process,
 * measured in rounds paired with the floor on one CPU, as median ratios with
 * their spread; plus start-up time, idle and loaded RSS, throughput and
 * latency. Prints a table, then as its last line one JSON object of figures.
 * Knobs: BENCH_SECONDS, BENCH_RATE, BENCH_RATE_SECONDS, BENCH_WARMUP_SECONDS,
 * BENCH_LATENCY_SECONDS, BENCH_ROUNDS, BENCH_STARTS, BENCH_CONNECTIONS,
 * BENCH_SSE_SAMPLES, BENCH_CASES, BENCH_BASELINE, BENCH_PIN (see docs/benchmarks.md).
 */
import { compile, type Build } from './lib/build.ts';
import { loadConfig } from './lib/config.ts';
import { pinOrchestrator } from './lib/cpus.ts';
import { renderTable } from './lib/report.ts';
import { toolgateWithCatalogue } from './lib/contracts.ts';
import { contextForge } from './lib/contextforge.ts';
import {
  BENCH_KEY,
  writeBenchPolicy,
  writeGatewayPolicy,
  writeGuardedPolicy,
  writeManyKeysPolicy,
  writeRowsPolicy,
} from './lib/policy.ts';
import { SERVICE_ACCOUNT_CALL, toolgateWithServiceAccounts } from './lib/kubernetes.ts';
import { l1HitRates, toolgateWithRedisGrants } from './lib/redis-policy.ts';
import { MODERN_SEARCH_CALL, REPORT_CALL, SEARCH_CALL, type BenchRequest } from './lib/request.ts';
import { fig, runBenchmark, type Case } from './lib/runner.ts';
import { measureStartup } from './lib/startup.ts';
import { toolgateWithValidator } from './lib/validator.ts';
import { benchProxy, direct, toolgate, toolgateTracing, type Launcher } from './lib/targets.ts';

const policyFile = writeBenchPolicy();

/** Static keys of the many-principals case, each its own principal. */
const MANY_KEYS = 10_000;

/**
 * The policy case with MANY_KEYS static keys; every request it is sent
 * carries the next key in turn. The keys file is written on first use.
 */
function toolgateWithManyKeys(name: string): Launcher {
  let written: ReturnType<typeof writeManyKeysPolicy> | undefined;
  return async (ctx) => {
    written ??= writeManyKeysPolicy(MANY_KEYS);
    const bearers = written.keys.map((key) => `Bearer ${key}`);
    const target = await toolgate(name, { args: ['--policy-file', written.policyFile] })(ctx);
    const adapt = (req: BenchRequest): BenchRequest => ({
      ...req,
      headers: { ...req.headers, authorization: bearers[0] as string },
      rotate: { header: 'authorization', values: bearers },
    });
    return { ...target, adapt };
  };
}
const launchers: Record<string, Launcher> = {
  direct,
  floor: benchProxy('floor'),
  peer: benchProxy('peer'),
  policy_floor: benchProxy('policy_floor'),
  toolgate: toolgate('toolgate'),
  policy: toolgate('policy', { args: ['--policy-file', policyFile] }),
  policy_redis: toolgateWithRedisGrants('policy_redis', policyFile),
  policy_serviceaccount: toolgateWithServiceAccounts('policy_serviceaccount'),
  tracing_sampled: toolgateTracing('tracing_sampled', 'parentbased_traceidratio', '0.1'),
  tracing_always: toolgateTracing('tracing_always', 'always_on'),
  validator: toolgateWithValidator('validator', policyFile),
  catalogue_1000: toolgateWithCatalogue('catalogue_1000', policyFile, false),
  pinned_1000: toolgateWithCatalogue('pinned_1000', policyFile, true),
  rows20: toolgate('rows20', { args: ['--policy-file', writeRowsPolicy('plain')] }),
  conditions20: toolgate('conditions20', { args: ['--policy-file', writeRowsPolicy('conditions')] }),
  conditions20_every: toolgate('conditions20_every', { args: ['--policy-file', writeRowsPolicy('every')] }),
  guarded: toolgate('guarded', { args: ['--policy-file', writeGuardedPolicy()] }),
  contextforge: contextForge('contextforge'),
  gateway_toolgate: toolgate('gateway_toolgate', { args: ['--policy-file', writeGatewayPolicy()] }),
  keys10k: toolgateWithManyKeys('keys10k'),
};

/** The same call, authenticated with the bench agent's static key. */
const AUTHENTICATED_CALL = {
  ...SEARCH_CALL,
  headers: { ...SEARCH_CALL.headers, authorization: `Bearer ${BENCH_KEY}` },
};
/** A call answered with a 4 KB report, authenticated the same way. */
const REPORT = { ...REPORT_CALL, headers: { ...REPORT_CALL.headers, authorization: `Bearer ${BENCH_KEY}` } };

/**
 * One entry per measured configuration: which target, what request, which
 * measures, and the keys it adds to the JSON line (in this order). A report
 * may read other cases' figures: `r.figures.get('floor')?.rps`.
 */
const cases: readonly Case[] = [
  {
    id: 'direct',
    label: 'stub, no proxy',
    target: 'direct',
    request: SEARCH_CALL,
    measures: ['throughput', 'latency', 'sse'],
    report: (r) => ({ direct_rps: fig.rps(r.figures.get('direct')?.rps) }),
  },
  {
    id: 'floor',
    label: 'minimal undici pass-through',
    target: 'floor',
    request: SEARCH_CALL,
    measures: ['throughput', 'latency', 'sse'],
    report: (r) => ({
      floor_rps: fig.rps(r.figures.get('floor')?.rps),
      floor_cpu_us_at_rate: fig.us(r.figures.get('floor')?.cpuUsAtRate),
      ...fig.spread('floor_rss_idle_mb', r.startup.floorRssIdleMb, fig.mb),
    }),
  },
  {
    id: 'peer',
    label: 'http-proxy, keep-alive',
    target: 'peer',
    request: SEARCH_CALL,
    measures: ['throughput', 'latency'],
    cpuVsFloor: true,
    report: (r) => ({ peer_rps: fig.rps(r.figures.get('peer')?.rps) }),
  },
  {
    id: 'toolgate',
    label: 'toolgate, default settings, a 2026-07-28 call (headers name the method)',
    target: 'toolgate',
    request: MODERN_SEARCH_CALL,
    measures: ['throughput', 'latency', 'sse'],
    cpuVsFloor: true,
    report: (r) => {
      const t = r.figures.get('toolgate');
      const d = r.figures.get('direct');
      const floor = r.figures.get('floor');
      return {
        ...fig.spread('cpu_ratio', r.cpuRatio.get('toolgate')),
        ...fig.spread('cpu_ratio_saturated', r.cpuRatioSaturated.get('toolgate')),
        ...fig.spread('toolgate_baseline_cpu_ratio', r.vsBaseline.get('toolgate')),
        ...fig.spread('toolgate_baseline_cpu_ratio_saturated', r.vsBaselineSaturated.get('toolgate')),
        cpu_us_at_rate: fig.us(t?.cpuUsAtRate),
        toolgate_rps: fig.rps(t?.rps),
        ratio_to_floor: fig.ratio(r.rpsRatio.get('toolgate')?.median, 1),
        ratio_to_peer: fig.ratio(r.rpsRatio.get('toolgate')?.median, r.rpsRatio.get('peer')?.median),
        p50_added_ms: fig.addedMs(t?.p50Ms, d?.p50Ms),
        p99_added_ms: fig.addedMs(t?.p99Ms, d?.p99Ms),
        cpu_us_per_req: fig.us(t?.cpuUsPerReq),
        floor_cpu_us_per_req: fig.us(floor?.cpuUsPerReq),
        sse_first_event_added_ms: fig.addedMs(t?.sseFirstEventMs, d?.sseFirstEventMs),
        ...fig.spread('rss_idle_mb', r.startup.rssIdleMb, fig.mb),
        ...fig.spread('rss_idle_catalogue_mb', r.startup.catalogueRssIdleMb, fig.mb),
        ...fig.spread('ready_ms', r.startup.readyMs, fig.ms),
        rss_loaded_mb: fig.mb(t?.rssLoadedMb),
        floor_rss_loaded_mb: fig.mb(r.floorBeside.get('toolgate')?.rssLoadedMb),
        rss_loaded_ratio: fig.ratio(t?.rssLoadedMb, r.floorBeside.get('toolgate')?.rssLoadedMb),
      };
    },
  },
  {
    id: 'toolgate_2025',
    label: 'toolgate, default settings, the same call from a 2025-11-25 client (body classified)',
    target: 'toolgate',
    request: SEARCH_CALL,
    measures: ['throughput'],
    cpuVsFloor: true,
    report: (r) => ({
      ...fig.spread('cpu_ratio_2025', r.cpuRatio.get('toolgate_2025')),
      ...fig.spread('cpu_ratio_2025_saturated', r.cpuRatioSaturated.get('toolgate_2025')),
    }),
  },
  {
    id: 'policy',
    label: 'toolgate, key + grants + schema',
    target: 'policy',
    request: AUTHENTICATED_CALL,
    measures: ['throughput', 'latency'],
    cpuVsFloor: true,
    report: (r) => {
      const p = r.figures.get('policy');
      return {
        ...fig.spread('policy_cpu_ratio', r.cpuRatio.get('policy')),
        ...fig.spread('policy_cpu_ratio_saturated', r.cpuRatioSaturated.get('policy')),
        ...fig.spread('policy_baseline_cpu_ratio', r.vsBaseline.get('policy')),
        ...fig.spread('policy_baseline_cpu_ratio_saturated', r.vsBaselineSaturated.get('policy')),
        policy_rps: fig.rps(p?.rps),
        policy_ratio_to_floor: fig.ratio(r.rpsRatio.get('policy')?.median, 1),
        policy_p50_added_ms: fig.addedMs(p?.p50Ms, r.figures.get('direct')?.p50Ms),
        policy_cpu_us_per_req: fig.us(p?.cpuUsPerReq),
        policy_cpu_us_at_rate: fig.us(p?.cpuUsAtRate),
        policy_rss_loaded_mb: fig.mb(p?.rssLoadedMb),
      };
    },
  },
  {
    id: 'policy_floor',
    label: 'the policy floor: the floor plus key, grant and schema, nothing else',
    target: 'policy_floor',
    request: AUTHENTICATED_CALL,
    measures: ['throughput'],
    cpuVsFloor: true,
    report: (r) => ({
      ...fig.spread('policy_floor_cpu_ratio', r.cpuRatio.get('policy_floor')),
      ...fig.spread('policy_floor_cpu_ratio_saturated', r.cpuRatioSaturated.get('policy_floor')),
      policy_floor_cpu_us_per_req: fig.us(r.figures.get('policy_floor')?.cpuUsPerReq),
    }),
  },
  {
    id: 'keys10k',
    label: 'toolgate, policy, 10,000 static keys, each call the next key (first use of each principal)',
    target: 'keys10k',
    request: AUTHENTICATED_CALL,
    measures: [],
    firstPass: true,
    partner: { id: 'keys10k_onekey', target: 'policy' },
    report: (r) => {
      const many = r.figures.get('keys10k');
      const one = r.figures.get('keys10k_onekey');
      const ratio = r.passRatio.get('keys10k');
      return {
        keys10k_p99_ms: fig.addedMs(many?.p99Ms, 0),
        keys10k_onekey_p99_ms: fig.addedMs(one?.p99Ms, 0),
        ...fig.spread('keys10k_p99_ratio', ratio?.p99),
        keys10k_p50_ms: fig.addedMs(many?.p50Ms, 0),
        keys10k_onekey_p50_ms: fig.addedMs(one?.p50Ms, 0),
        ...fig.spread('keys10k_cpu_ratio', ratio?.cpu),
        keys10k_cpu_us_at_rate: fig.us(many?.cpuUsAtRate),
        keys10k_onekey_cpu_us_at_rate: fig.us(one?.cpuUsAtRate),
        keys10k_rss_loaded_mb: fig.mb(many?.rssLoadedMb),
        keys10k_onekey_rss_loaded_mb: fig.mb(one?.rssLoadedMb),
        ...fig.spread('keys10k_rss_ratio', ratio?.rss),
        keys10k_ready_ms: fig.ms(many?.readyMs),
        keys10k_onekey_ready_ms: fig.ms(one?.readyMs),
      };
    },
  },
  {
    id: 'gateway_peer',
    label: 'ContextForge (gunicorn, PostgreSQL, Redis) beside toolgate, one tool allowed, one denied',
    target: 'contextforge',
    request: AUTHENTICATED_CALL,
    refused: REPORT,
    measures: ['throughput', 'latency'],
    cpuVsFloor: true,
    partner: { id: 'gateway_toolgate', target: 'gateway_toolgate' },
    // ContextForge spends ~60-70 ms of CPU per call (py-spy: route matching, Redis, database, middleware), so
    // one CPU saturates at ~15 calls a second; 8 keeps it near half busy beside the floor and toolgate.
    rate: 8,
    // At 32 connections its ~32 calls in flight share the CPU and finish together ~2 s later: a 3 s run
    // counted 0 to 5 of them. At 4 (for toolgate too) a call takes ~0.3 s and the CPU stays saturated.
    connections: 4,
    report: (r) => {
      const peer = r.figures.get('gateway_peer');
      const ours = r.figures.get('gateway_toolgate');
      return {
        gateway_peer_rps: fig.rps(peer?.rps),
        gateway_peer_p50_added_ms: fig.addedMs(peer?.p50AddedMs, 0),
        gateway_peer_p99_added_ms: fig.addedMs(peer?.p99AddedMs, 0),
        gateway_peer_cpu_us_per_req: fig.us(peer?.cpuUsPerReq),
        gateway_peer_cpu_us_at_rate: fig.us(peer?.cpuUsAtRate),
        gateway_peer_rss_loaded_mb: fig.mb(peer?.rssLoadedMb),
        gateway_toolgate_rps: fig.rps(ours?.rps),
        gateway_toolgate_p50_added_ms: fig.addedMs(ours?.p50AddedMs, 0),
        gateway_toolgate_p99_added_ms: fig.addedMs(ours?.p99AddedMs, 0),
        gateway_toolgate_cpu_us_per_req: fig.us(ours?.cpuUsPerReq),
        gateway_toolgate_cpu_us_at_rate: fig.us(ours?.cpuUsAtRate),
        gateway_toolgate_rss_loaded_mb: fig.mb(ours?.rssLoadedMb),
        // Saturated side by side: the regime of gateway_peer_cpu_us_per_req, and each gets its share of the CPU.
        ...fig.spread('toolgate_vs_gateway_cpu_ratio', r.partnerRatioSaturated.get('gateway_peer')),
        ...fig.spread('toolgate_vs_gateway_cpu_ratio_at_rate', r.partnerRatio.get('gateway_peer')),
      };
    },
  },
  {
    id: 'policy_4k',
    label: 'toolgate, policy, a call answered with 4 KB, no result guard',
    target: 'policy',
    request: REPORT,
    measures: ['throughput'],
    cpuVsFloor: true,
    report: (r) => ({ ...fig.spread('policy_4k_cpu_ratio', r.cpuRatio.get('policy_4k')) }),
  },
  {
    id: 'guarded',
    label: 'toolgate, policy, the same call with the result guard redacting 6 detectors',
    target: 'guarded',
    request: REPORT,
    measures: ['throughput'],
    cpuVsFloor: true,
    expectInAnswer: '[redacted: aws_access_key]',
    report: (r) => ({
      ...fig.spread('guarded_cpu_ratio', r.cpuRatio.get('guarded')),
      guard_cost_cpu_ratio: fig.ratio(r.cpuRatio.get('guarded')?.median, r.cpuRatio.get('policy_4k')?.median),
      guarded_cpu_us_at_rate: fig.us(r.figures.get('guarded')?.cpuUsAtRate),
    }),
  },
  {
    id: 'policy_serviceaccount',
    label: 'toolgate, policy with a ServiceAccount token (TokenReview cached)',
    target: 'policy_serviceaccount',
    request: SERVICE_ACCOUNT_CALL,
    measures: ['throughput'],
    cpuVsFloor: true,
    report: (r) => ({
      ...fig.spread('serviceaccount_cpu_ratio', r.cpuRatio.get('policy_serviceaccount')),
      serviceaccount_to_static_key_cpu: fig.ratio(
        r.cpuRatio.get('policy_serviceaccount')?.median,
        r.cpuRatio.get('policy')?.median,
      ),
      serviceaccount_cpu_us_at_rate: fig.us(r.figures.get('policy_serviceaccount')?.cpuUsAtRate),
    }),
  },
  {
    id: 'policy_redis',
    label: 'toolgate, policy with grants in Redis',
    target: 'policy_redis',
    request: AUTHENTICATED_CALL,
    measures: ['throughput', 'latency'],
    cpuVsFloor: true,
    report: (r) => {
      const withRedis = r.figures.get('policy_redis');
      const inProcess = r.figures.get('policy');
      return {
        redis_rps: fig.rps(withRedis?.rps),
        redis_ratio: fig.ratio(r.rpsRatio.get('policy_redis')?.median, r.rpsRatio.get('policy')?.median),
        redis_p50_added_ms: fig.addedMs(withRedis?.p50Ms, inProcess?.p50Ms),
        redis_l1_hit_rate: l1HitRates.get('policy_redis') ?? null,
      };
    },
  },
  {
    id: 'rows20',
    label: 'toolgate, 20 grant rows for the tool, no conditions',
    target: 'rows20',
    request: AUTHENTICATED_CALL,
    measures: ['throughput'],
    cpuVsFloor: true,
    report: (r) => ({ rows20_cpu_us_at_rate: fig.us(r.figures.get('rows20')?.cpuUsAtRate) }),
  },
  {
    id: 'conditions20',
    label: 'toolgate, the same 20 rows, each with a condition',
    target: 'conditions20',
    request: AUTHENTICATED_CALL,
    measures: ['throughput'],
    cpuVsFloor: true,
    report: (r) => {
      const withConditions = r.figures.get('conditions20');
      return {
        conditions20_cpu_us_at_rate: fig.us(withConditions?.cpuUsAtRate),
        conditions_cpu_ratio: fig.ratio(r.cpuRatio.get('conditions20')?.median, r.cpuRatio.get('rows20')?.median),
        conditions_rps_ratio: fig.ratio(r.rpsRatio.get('conditions20')?.median, r.rpsRatio.get('rows20')?.median),
      };
    },
  },
  {
    id: 'conditions20_every',
    label: 'toolgate, 20 conditions all evaluated per call (worst case)',
    target: 'conditions20_every',
    request: AUTHENTICATED_CALL,
    measures: ['throughput'],
    cpuVsFloor: true,
    report: (r) => {
      const every = r.figures.get('conditions20_every');
      return {
        conditions20_every_cpu_us_at_rate: fig.us(every?.cpuUsAtRate),
        conditions_every_cpu_ratio: fig.ratio(
          r.cpuRatio.get('conditions20_every')?.median,
          r.cpuRatio.get('rows20')?.median,
        ),
      };
    },
  },
  {
    id: 'tracing_sampled',
    label: 'toolgate, tracing, parentbased_traceidratio 0.1',
    target: 'tracing_sampled',
    request: SEARCH_CALL,
    measures: ['throughput', 'latency'],
    cpuVsFloor: true,
    report: (r) => ({
      ...fig.spread('tracing_sampled_cpu_ratio', r.cpuRatio.get('tracing_sampled')),
      ...fig.spread('tracing_sampled_cpu_ratio_saturated', r.cpuRatioSaturated.get('tracing_sampled')),
      ...fig.spread('tracing_sampled_baseline_cpu_ratio', r.vsBaseline.get('tracing_sampled')),
      ...fig.spread('tracing_sampled_baseline_cpu_ratio_saturated', r.vsBaselineSaturated.get('tracing_sampled')),
      tracing_sampled_cpu_us_at_rate: fig.us(r.figures.get('tracing_sampled')?.cpuUsAtRate),
    }),
  },
  {
    id: 'tracing_always',
    label: 'toolgate, tracing, always_on',
    target: 'tracing_always',
    request: SEARCH_CALL,
    measures: ['throughput', 'latency'],
    cpuVsFloor: true,
    report: (r) => {
      const on = r.figures.get('tracing_always');
      const off = r.figures.get('toolgate');
      return {
        ...fig.spread('tracing_always_cpu_ratio', r.cpuRatio.get('tracing_always')),
        ...fig.spread('tracing_always_cpu_ratio_saturated', r.cpuRatioSaturated.get('tracing_always')),
        ...fig.spread('tracing_always_baseline_cpu_ratio', r.vsBaseline.get('tracing_always')),
        ...fig.spread('tracing_always_baseline_cpu_ratio_saturated', r.vsBaselineSaturated.get('tracing_always')),
        tracing_rps: fig.rps(on?.rps),
        tracing_ratio: fig.ratio(r.rpsRatio.get('tracing_always')?.median, r.rpsRatio.get('toolgate')?.median),
        tracing_p50_added_ms: fig.addedMs(on?.p50Ms, off?.p50Ms),
        tracing_cpu_us_per_req: fig.us(on?.cpuUsPerReq),
        tracing_cpu_us_at_rate: fig.us(on?.cpuUsAtRate),
      };
    },
  },
  {
    id: 'validator',
    label: 'toolgate, policy + one external gRPC validator',
    target: 'validator',
    request: AUTHENTICATED_CALL,
    measures: ['throughput', 'latency'],
    cpuVsFloor: true,
    report: (r) => {
      const withValidator = r.figures.get('validator');
      const without = r.figures.get('policy');
      return {
        ...fig.spread('validator_cpu_ratio', r.cpuRatio.get('validator')),
        ...fig.spread('validator_cpu_ratio_saturated', r.cpuRatioSaturated.get('validator')),
        ...fig.spread('validator_baseline_cpu_ratio', r.vsBaseline.get('validator')),
        ...fig.spread('validator_baseline_cpu_ratio_saturated', r.vsBaselineSaturated.get('validator')),
        validator_rps: fig.rps(withValidator?.rps),
        validator_ratio: fig.ratio(r.rpsRatio.get('validator')?.median, r.rpsRatio.get('policy')?.median),
        validator_p50_added_ms: fig.addedMs(withValidator?.p50Ms, without?.p50Ms),
        validator_cpu_us_at_rate: fig.us(withValidator?.cpuUsAtRate),
      };
    },
  },
  {
    id: 'catalogue_1000',
    label: 'toolgate, policy, 1,000-tool catalogue',
    target: 'catalogue_1000',
    request: AUTHENTICATED_CALL,
    measures: ['throughput', 'latency'],
    cpuVsFloor: true,
    report: (r) => ({ catalogue_1000_cpu_us_at_rate: fig.us(r.figures.get('catalogue_1000')?.cpuUsAtRate) }),
  },
  {
    id: 'pinned_1000',
    label: 'toolgate, policy, 1,000 tools pinned (contracts + lint enforce)',
    target: 'pinned_1000',
    request: AUTHENTICATED_CALL,
    measures: ['throughput', 'latency'],
    cpuVsFloor: true,
    report: (r) => {
      const pinned = r.figures.get('pinned_1000');
      return {
        pinned_1000_cpu_us_at_rate: fig.us(pinned?.cpuUsAtRate),
        pinned_cpu_ratio: fig.ratio(r.cpuRatio.get('pinned_1000')?.median, r.cpuRatio.get('catalogue_1000')?.median),
        pinned_rps_ratio: fig.ratio(r.rpsRatio.get('pinned_1000')?.median, r.rpsRatio.get('catalogue_1000')?.median),
      };
    },
  },
];

/**
 * What `npm run bench` runs without BENCH_CASES: the cases that carry issue
 * 20's targets (transparent, policy, tracing, validator; with the start-up
 * figures and the direct and floor references they are read against), in
 * about eight minutes. The others (comparisons, peers and cases that start a
 * cluster, a database or 10,000 principals) run when named, or with `all`.
 */
const DEFAULT_CASES = ['direct', 'floor', 'toolgate', 'policy', 'tracing_sampled', 'tracing_always', 'validator'];

const loaded = loadConfig(
  process.env,
  cases.map((c) => c.id),
  DEFAULT_CASES,
);
if (!loaded.ok) {
  console.error(loaded.reason);
  process.exit(2);
}
const config = loaded.config;
const selected = cases.filter((c) => config.cases.includes(c.id));

const benchStarted = performance.now();
pinOrchestrator();
let builds: { own: Build; baseline?: Build };
try {
  console.error('compiling this checkout');
  const own = compile();
  if (config.baseline !== undefined) console.error(`compiling the baseline ${config.baseline}`);
  builds = config.baseline === undefined ? { own } : { own, baseline: compile(config.baseline) };
} catch (err) {
  console.error(`invalid BENCH_BASELINE or build failure: ${(err as Error).message}`);
  process.exit(2);
}

// Start-up figures belong to the toolgate case: measured when it is selected.
const startup = selected.some((c) => c.id === 'toolgate')
  ? (ctx: Parameters<Launcher>[0]) =>
      measureStartup(ctx, config.starts, {
        floor: launchers.floor as Launcher,
        bare: toolgate('idle'),
        catalogue: toolgate('idle-catalogue', { args: ['--policy-file', policyFile] }),
      })
  : undefined;

const outcome = await runBenchmark(selected, launchers, config, builds, startup, (line) => console.error(line));
// Every case reports, selected or not, so the JSON line always has the same keys (null when not measured).
const keys = Object.assign({}, ...cases.map((c) => c.report(outcome.summary)));
console.error(`bench took ${((performance.now() - benchStarted) / 1000).toFixed(0)} s`);
console.log(renderTable(selected, outcome, config, keys));
console.log(JSON.stringify(keys));
process.exitCode = outcome.failed.size > 0 ? 1 : 0;
