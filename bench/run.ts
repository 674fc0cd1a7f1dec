/**
 * `npm run bench`: toolgate against direct access, the floor (the least any
 * policy proxy must do) and the peer (http-proxy), all in one process tree on
 * loopback. Prints a table, then as its last line one JSON object of figures.
 * Knobs: BENCH_SECONDS, BENCH_WARMUP_SECONDS, BENCH_LATENCY_SECONDS,
 * BENCH_ROUNDS, BENCH_CONNECTIONS, BENCH_SSE_SAMPLES, BENCH_CASES (see docs/benchmarks.md).
 */
import { loadConfig } from './lib/config.ts';
import { renderTable } from './lib/report.ts';
import { BENCH_KEY, writeBenchPolicy, writeRowsPolicy } from './lib/policy.ts';
import { l1HitRates, toolgateWithRedisGrants } from './lib/redis-policy.ts';
import { SEARCH_CALL } from './lib/request.ts';
import { fig, runBenchmark, type Case } from './lib/runner.ts';
import { toolgateWithValidator } from './lib/validator.ts';
import { benchProxy, direct, toolgate, toolgateTracing, type Launcher } from './lib/targets.ts';

const launchers: Record<string, Launcher> = {
  direct,
  floor: benchProxy('floor', 'floor.ts'),
  peer: benchProxy('peer', 'peer.ts'),
  toolgate: toolgate('toolgate'),
  policy: toolgate('policy', { args: ['--policy-file', writeBenchPolicy()] }),
  policy_redis: toolgateWithRedisGrants('policy_redis', writeBenchPolicy()),
  rows20: toolgate('rows20', { args: ['--policy-file', writeRowsPolicy('plain')] }),
  conditions20: toolgate('conditions20', { args: ['--policy-file', writeRowsPolicy('conditions')] }),
  conditions20_every: toolgate('conditions20_every', { args: ['--policy-file', writeRowsPolicy('every')] }),
  tracing: toolgateTracing('tracing'),
  validator: toolgateWithValidator('validator', writeBenchPolicy()),
};

/** The same call, authenticated with the bench agent's static key. */
const AUTHENTICATED_CALL = { ...SEARCH_CALL, headers: { ...SEARCH_CALL.headers, authorization: `Bearer ${BENCH_KEY}` } };

/**
 * One entry per measured configuration: which target, what request, which
 * measures, and the keys it adds to the JSON line (in this order). A report
 * may read other cases' figures: `r.get('floor')?.rps`.
 */
const cases: readonly Case[] = [
  {
    id: 'direct', label: 'stub, no proxy', target: 'direct', request: SEARCH_CALL,
    measures: ['throughput', 'latency', 'sse'],
    report: (r) => ({ direct_rps: fig.rps(r.get('direct')?.rps) }),
  },
  {
    id: 'floor', label: 'minimal undici pass-through', target: 'floor', request: SEARCH_CALL,
    measures: ['throughput', 'latency', 'sse'],
    report: (r) => ({ floor_rps: fig.rps(r.get('floor')?.rps) }),
  },
  {
    id: 'peer', label: 'http-proxy, keep-alive', target: 'peer', request: SEARCH_CALL,
    measures: ['throughput', 'latency'],
    report: (r) => ({ peer_rps: fig.rps(r.get('peer')?.rps) }),
  },
  {
    id: 'toolgate', label: 'toolgate, default settings', target: 'toolgate', request: SEARCH_CALL,
    measures: ['throughput', 'latency', 'sse'],
    report: (r) => {
      const t = r.get('toolgate');
      const d = r.get('direct');
      return {
        toolgate_rps: fig.rps(t?.rps),
        ratio_to_floor: fig.ratio(t?.rps, r.get('floor')?.rps),
        ratio_to_peer: fig.ratio(t?.rps, r.get('peer')?.rps),
        p50_added_ms: fig.addedMs(t?.p50Ms, d?.p50Ms),
        p99_added_ms: fig.addedMs(t?.p99Ms, d?.p99Ms),
        cpu_us_per_req: fig.us(t?.cpuUsPerReq),
        floor_cpu_us_per_req: fig.us(r.get('floor')?.cpuUsPerReq),
        sse_first_event_added_ms: fig.addedMs(t?.sseFirstEventMs, d?.sseFirstEventMs),
      };
    },
  },
  {
    id: 'policy', label: 'toolgate, key + grants + schema', target: 'policy', request: AUTHENTICATED_CALL,
    measures: ['throughput', 'latency'],
    report: (r) => {
      const p = r.get('policy');
      return {
        policy_rps: fig.rps(p?.rps),
        policy_ratio_to_floor: fig.ratio(p?.rps, r.get('floor')?.rps),
        policy_p50_added_ms: fig.addedMs(p?.p50Ms, r.get('direct')?.p50Ms),
        policy_cpu_us_per_req: fig.us(p?.cpuUsPerReq),
      };
    },
  },
  {
    id: 'policy_redis', label: 'toolgate, policy with grants in Redis', target: 'policy_redis', request: AUTHENTICATED_CALL,
    measures: ['throughput', 'latency'],
    report: (r) => {
      const withRedis = r.get('policy_redis');
      const inProcess = r.get('policy');
      return {
        redis_rps: fig.rps(withRedis?.rps),
        redis_ratio: fig.ratio(withRedis?.rps, inProcess?.rps),
        redis_p50_added_ms: fig.addedMs(withRedis?.p50Ms, inProcess?.p50Ms),
        redis_l1_hit_rate: l1HitRates.get('policy_redis') ?? null,
      };
    },
  },
  {
    id: 'rows20', label: 'toolgate, 20 grant rows for the tool, no conditions', target: 'rows20', request: AUTHENTICATED_CALL,
    measures: ['throughput'],
    report: (r) => ({ rows20_cpu_us_per_req: fig.us(r.get('rows20')?.cpuUsPerReq) }),
  },
  {
    id: 'conditions20', label: 'toolgate, the same 20 rows, each with a condition', target: 'conditions20', request: AUTHENTICATED_CALL,
    measures: ['throughput'],
    report: (r) => {
      const withConditions = r.get('conditions20');
      const plain = r.get('rows20');
      return {
        conditions20_cpu_us_per_req: fig.us(withConditions?.cpuUsPerReq),
        conditions_cpu_ratio: fig.ratio(withConditions?.cpuUsPerReq, plain?.cpuUsPerReq),
        conditions_rps_ratio: fig.ratio(withConditions?.rps, plain?.rps),
      };
    },
  },
  {
    id: 'conditions20_every', label: 'toolgate, 20 conditions all evaluated per call (worst case)', target: 'conditions20_every', request: AUTHENTICATED_CALL,
    measures: ['throughput'],
    report: (r) => {
      const every = r.get('conditions20_every');
      return {
        conditions20_every_cpu_us_per_req: fig.us(every?.cpuUsPerReq),
        conditions_every_cpu_ratio: fig.ratio(every?.cpuUsPerReq, r.get('rows20')?.cpuUsPerReq),
      };
    },
  },
  {
    id: 'tracing', label: 'toolgate, tracing on (OTLP to a local stub)', target: 'tracing', request: SEARCH_CALL,
    measures: ['throughput', 'latency'],
    report: (r) => {
      const on = r.get('tracing');
      const off = r.get('toolgate');
      return {
        tracing_rps: fig.rps(on?.rps),
        tracing_ratio: fig.ratio(on?.rps, off?.rps),
        tracing_p50_added_ms: fig.addedMs(on?.p50Ms, off?.p50Ms),
        tracing_cpu_us_per_req: fig.us(on?.cpuUsPerReq),
      };
    },
  },
  {
    id: 'validator', label: 'toolgate, policy + one external gRPC validator', target: 'validator', request: AUTHENTICATED_CALL,
    measures: ['throughput', 'latency'],
    report: (r) => {
      const withValidator = r.get('validator');
      const without = r.get('policy');
      return {
        validator_rps: fig.rps(withValidator?.rps),
        validator_ratio: fig.ratio(withValidator?.rps, without?.rps),
        validator_p50_added_ms: fig.addedMs(withValidator?.p50Ms, without?.p50Ms),
      };
    },
  },
];

const loaded = loadConfig(process.env, cases.map((c) => c.id));
if (!loaded.ok) {
  console.error(loaded.reason);
  process.exit(2);
}
const config = loaded.config;
const selected = config.cases === undefined ? cases : cases.filter((c) => config.cases?.includes(c.id));

const outcome = await runBenchmark(selected, launchers, config, (line) => console.error(line));
// Every case reports, selected or not, so the JSON line always has the same keys (null when not measured).
const keys = Object.assign({}, ...cases.map((c) => c.report(outcome.best)));
console.log(renderTable(selected, outcome, config, keys));
console.log(JSON.stringify(keys));
process.exitCode = outcome.failed.size > 0 ? 1 : 0;
