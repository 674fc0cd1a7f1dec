import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCountingUpstream, type CountingUpstream } from '../helpers/counting-upstream.ts';
import { performance } from 'node:perf_hooks';
import { AGENT_KEY, executionPolicy, KEYS_YAML, OTHER_KEY, toolCall } from '../helpers/execution-policy.ts';
import { metricValue } from '../helpers/metrics.ts';
import { runKillTrials, SAFE_ANSWERS } from '../helpers/kill-trials.ts';
import { passed, post, refusalOf, refusedCall } from '../helpers/raw.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { startToolgateProcess, type ToolgateProcess } from '../helpers/toolgate-process.ts';
import { waitFor } from '../helpers/wait.ts';

const agent = { authorization: `Bearer ${AGENT_KEY}` };
/** One kill cutting calls in every phase; bench:execution runs 200 calls over 40 kills. */
const CALLS = 8;
/** read_status calls per minute, shared by both replicas. */
const LIMIT = 120;

describe('toolgate processes sharing Redis: idempotency records survive a replica killed mid-call; rate limits hold across replicas', () => {
  let dir: string;
  let redis: RedisServer;
  let upstream: CountingUpstream;
  let survivor: ToolgateProcess;
  let victim: ToolgateProcess | undefined;
  let second: ToolgateProcess;
  let flags: string[];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-exec-'));
    await writeFile(join(dir, 'keys.yaml'), KEYS_YAML);
    await writeFile(
      join(dir, 'policy.yaml'),
      executionPolicy(`rateLimits:\n  - { principal: "*", tool: read_status, requests: ${LIMIT}, per: minute }\n`),
    );
    redis = await startRedis();
    upstream = await startCountingUpstream();
    flags = [
      '--policy-file',
      join(dir, 'policy.yaml'),
      '--redis-url',
      redis.url,
      '--policy-domain',
      'exec',
      '--redis-command-timeout-ms',
      '200',
    ];
    [survivor, second] = await Promise.all([
      startToolgateProcess(upstream.origin, flags),
      startToolgateProcess(upstream.origin, flags),
    ]);
  });
  after(async () => {
    await Promise.all([survivor?.close(), victim?.close(), second?.close()]);
    await upstream?.close();
    await redis?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it(`never runs a keyed non_idempotent_write twice when its replica is SIGKILLed mid-call (${CALLS} calls)`, async () => {
    const result = await runKillTrials({
      kills: 1,
      callsPerKill: CALLS,
      upstream,
      survivor,
      headers: agent,
      callMs: 300,
      respawn: async () => (victim = await startToolgateProcess(upstream.origin, flags)),
    });
    assert.equal(result.doubleExecutions, 0, JSON.stringify(result));
    for (const answer of Object.keys(result.answers))
      assert.ok(SAFE_ANSWERS.has(answer), JSON.stringify(result.answers));
  });

  it('turns a PENDING record whose holder died into outcome_unknown once its lease runs out, and never runs it', async () => {
    upstream.behaviour.delayMs = 400;
    victim = await startToolgateProcess(upstream.origin, flags);
    const key = `lease-${process.pid}`;
    const before = upstream.executions();
    // A 300 ms budget makes a short lease (deadline + 2 s grace).
    const first = post(victim.url, toolCall(1, 'refund_payment', { n: 1 }), {
      ...agent,
      'idempotency-key': key,
      'toolgate-timeout-ms': '300',
    }).catch(() => undefined);
    await waitFor(() => upstream.executions() > before, 'the call to reach the upstream', 20_000);
    await victim.kill();
    await first;
    const executions = upstream.executions();
    const inProgress = await post(survivor.url, toolCall(2, 'refund_payment', { n: 1 }), {
      ...agent,
      'idempotency-key': key,
    });
    assert.ok(['call_in_progress', 'outcome_unknown'].includes(String(refusalOf(inProgress)?.code)), inProgress.text);
    await waitFor(
      async () =>
        refusalOf(
          await post(survivor.url, toolCall(3, 'refund_payment', { n: 1 }), { ...agent, 'idempotency-key': key }),
        )?.code === 'outcome_unknown',
      'the lease to run out',
      8000,
    );
    assert.equal(upstream.executions(), executions);
  });

  it(`holds a limit of ${LIMIT} a minute across both replicas: admitted calls within 5% of the limit plus what it earned back`, async () => {
    const began = performance.now();
    let admitted = 0;
    let refused = 0;
    const replicas = [survivor, second];
    await Promise.all(
      [0, 1, 2, 3].map(async (lane) => {
        for (let i = 0; i < 60; i++) {
          const res = await post((replicas[(lane + i) % 2] as ToolgateProcess).url, toolCall(i, 'read_status'), agent);
          if (passed(res)) admitted++;
          else if (refusalOf(res)?.code === 'rate_limited') refused++;
        }
      }),
    );
    const earned = ((performance.now() - began) / 60_000) * LIMIT;
    assert.equal(admitted + refused, 240);
    assert.ok(
      Math.abs(admitted - (LIMIT + earned)) <= 0.05 * LIMIT,
      `${admitted} admitted, limit ${LIMIT} + ${earned.toFixed(1)} earned back`,
    );
  });

  it('falls back to per-replica limits while Redis does not answer, and says so in a metric', async () => {
    redis.freeze();
    try {
      const res = await post(second.url, toolCall(1, 'read_status'), { authorization: `Bearer ${OTHER_KEY}` });
      assert.ok(passed(res), 'the per-replica bucket admits a fresh caller');
      assert.ok((await metricValue(second.adminUrl, 'toolgate_rate_limit_fallback_total')) >= 1);
    } finally {
      redis.thaw();
    }
  });

  it('refuses a keyed call when the records cannot be written: 503 idempotency_unavailable, never run unrecorded', async () => {
    upstream.behaviour.delayMs = 0;
    redis.freeze();
    try {
      const attempts = upstream.attempts();
      const res = await post(survivor.url, toolCall(4, 'refund_payment', { n: 4 }), {
        ...agent,
        'idempotency-key': `frozen-${process.pid}`,
      });
      refusedCall(res, 'idempotency_unavailable');
      assert.equal(upstream.attempts(), attempts);
    } finally {
      redis.thaw();
    }
  });
});
