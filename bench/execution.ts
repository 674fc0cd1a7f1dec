/**
 * `npm run bench:execution`: how side-effecting calls run, measured through
 * real toolgate processes sharing a real redis-server, in front of a real MCP
 * server that counts executions. Progress goes to stderr; the last line of
 * stdout is one JSON object:
 *   double_executions  keys the upstream ran twice over the SIGKILL trials (must be 0)
 *   trials             keyed non_idempotent_write calls cut by a SIGKILL of their replica
 *   retry_ratio        retries / calls with half of all upstream requests failing 503
 *   breaker_fail_fast_p99_ms  p99 answer time of calls refused while the breaker is open (client round trip)
 *   breaker_fail_fast_p50_ms  the same, median
 *   ratelimit_error_pct       |admitted − (limit + earned back)| / limit over two replicas, in %
 *   deadline_answer_ms        when a 200 ms caller budget against a 2 s tool was answered
 * Knobs: BENCH_KILLS (20) × BENCH_CALLS_PER_KILL (10) trials.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startCountingUpstream, type CountingUpstream } from '../test/helpers/counting-upstream.ts';
import { AGENT_KEY, executionPolicy, KEYS_YAML, toolCall } from '../test/helpers/execution-policy.ts';
import { runKillTrials } from '../test/helpers/kill-trials.ts';
import { post } from '../test/helpers/raw.ts';
import { startRedis } from '../test/helpers/redis.ts';
import { startToolgateProcess, type ToolgateProcess } from '../test/helpers/toolgate-process.ts';

const KILLS = Number(process.env.BENCH_KILLS ?? 20);
const CALLS_PER_KILL = Number(process.env.BENCH_CALLS_PER_KILL ?? 10);
const LIMIT = 300;
const agent = { authorization: `Bearer ${AGENT_KEY}` };
const progress = (msg: string) => process.stderr.write(`bench:execution ${msg}\n`);

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

const round = (v: number, digits = 3) => Number(v.toFixed(digits));

const dir = await mkdtemp(join(tmpdir(), 'toolgate-bench-exec-'));
const redis = await startRedis();
const upstreams: CountingUpstream[] = [];
const processes: ToolgateProcess[] = [];
const figures: Record<string, number | null> = {
  double_executions: null,
  trials: null,
  retry_ratio: null,
  breaker_fail_fast_p99_ms: null,
  ratelimit_error_pct: null,
  breaker_fail_fast_p50_ms: null,
  deadline_answer_ms: null,
};

async function gate(upstream: CountingUpstream, flags: readonly string[]): Promise<ToolgateProcess> {
  const p = await startToolgateProcess(upstream.origin, ['--policy-file', join(dir, 'policy.yaml'), ...flags]);
  processes.push(p);
  return p;
}

async function counting(): Promise<CountingUpstream> {
  const u = await startCountingUpstream();
  upstreams.push(u);
  return u;
}

try {
  await writeFile(join(dir, 'keys.yaml'), KEYS_YAML);
  await writeFile(
    join(dir, 'policy.yaml'),
    executionPolicy(`rateLimits:\n  - { principal: "*", tool: read_status, requests: ${LIMIT}, per: minute }\n`),
  );
  const shared = ['--redis-url', redis.url, '--policy-domain', 'bench'];

  const killUpstream = await counting();
  const [survivor, second] = await Promise.all([gate(killUpstream, shared), gate(killUpstream, shared)]);
  progress(`SIGKILL trials: ${KILLS} kills × ${CALLS_PER_KILL} calls`);
  const trials = await runKillTrials({
    kills: KILLS,
    callsPerKill: CALLS_PER_KILL,
    upstream: killUpstream,
    survivor,
    headers: agent,
    callMs: 300,
    respawn: () => gate(killUpstream, shared),
  });
  progress(`answers to the repeats: ${JSON.stringify(trials.answers)}`);
  figures.double_executions = trials.doubleExecutions;
  figures.trials = trials.trials;

  progress('shared rate limit through two replicas');
  killUpstream.behaviour.delayMs = 0;
  const began = performance.now();
  let admitted = 0;
  await Promise.all(
    [0, 1, 2, 3].map(async (lane) => {
      for (let i = 0; i < (2 * LIMIT) / 4; i++) {
        const res = await post((lane % 2 === 0 ? survivor : second).url, toolCall(i, 'read_status'), agent);
        if (res.status === 200) admitted++;
      }
    }),
  );
  const expected = LIMIT + ((performance.now() - began) / 60_000) * LIMIT;
  figures.ratelimit_error_pct = round((Math.abs(admitted - expected) / LIMIT) * 100, 2);

  progress('retries with half the upstream requests failing');
  const flaky = await counting();
  const retrying = await gate(flaky, [
    '--breaker-consecutive-failures',
    '0',
    '--breaker-failure-percent',
    '0',
    '--retry-backoff-ms',
    '1',
  ]);
  flaky.behaviour.fail = (n) => (n % 2 === 1 ? 503 : 0);
  const calls = 400;
  // update_record (idempotent_write, maxRetries 2): read_status carries the rate limit measured above.
  for (let i = 0; i < calls; i++) await post(retrying.url, toolCall(i, 'update_record'), agent);
  figures.retry_ratio = round((flaky.attempts() - calls) / calls);

  progress('deadline: 200 ms caller budget against a 2 s tool');
  flaky.behaviour.fail = () => 0;
  flaky.behaviour.delayMs = 2000;
  const t0 = performance.now();
  const cut = await post(retrying.url, toolCall(1, 'refund_payment'), { ...agent, 'toolgate-timeout-ms': '200' });
  if (cut.status !== 504) throw new Error(`expected 504, got ${cut.status}`);
  figures.deadline_answer_ms = round(performance.now() - t0, 1);

  progress('breaker fail-fast');
  // Measured with no other replica alive: their timers and collections would land in the tail.
  await Promise.all([survivor, second, retrying].map((p) => p.close()));
  const dead = await counting();
  const breaking = await gate(dead, [
    '--breaker-consecutive-failures',
    '5',
    '--breaker-open-ms',
    '600000',
    '--retry-budget-percent',
    '0',
    '--retry-budget-min',
    '0',
  ]);
  dead.behaviour.fail = () => 503;
  for (let i = 0; i < 5; i++) await post(breaking.url, toolCall(i, 'update_record'), agent);
  // The first refusals run cold code in both processes: warm up, then measure the steady state.
  const WARM_UP = 300;
  const times: number[] = [];
  for (let i = 0; i < WARM_UP + 1000; i++) {
    const sent = performance.now();
    const res = await post(breaking.url, toolCall(i, 'update_record'), agent);
    if (res.status !== 503 || res.json().error?.data?.retryAfterMs === undefined)
      throw new Error(`the breaker did not refuse call ${i}: ${res.status} ${res.text.slice(0, 200)}`);
    if (i >= WARM_UP) times.push(performance.now() - sent);
  }
  const sorted = times.sort((a, b) => a - b);
  figures.breaker_fail_fast_p50_ms = round(percentile(sorted, 50));
  figures.breaker_fail_fast_p99_ms = round(percentile(sorted, 99));
} finally {
  await Promise.all(processes.map((p) => p.close()));
  await Promise.all(upstreams.map((u) => u.close()));
  await redis.close();
  await rm(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(figures)}\n`);
