/**
 * Shared rate limits when Redis stalls and comes back empty: two replicas
 * (two SharedBuckets on their own connections) against a real redis-server,
 * frozen with SIGSTOP, then restarted without its data. Together they must
 * stay near the rule, not admit a replica's whole rule each and then a fresh
 * burst on top.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRedisClient, parseRedisConfig, type RedisClient } from '../../src/cache/redis.ts';
import { TokenBuckets, type BucketLimit } from '../../src/interceptors/rate-limit/buckets.ts';
import { SharedBuckets } from '../../src/interceptors/rate-limit/shared-buckets.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { captureStderr } from '../helpers/stderr.ts';

// 10 a minute: one call back every 6 s.
const RULE: BucketLimit = { key: 'ten-a-minute', burst: 10, msPerCall: 6000 };
let redis: RedisServer;
const clients: RedisClient[] = [];

async function replica(domain: string): Promise<SharedBuckets> {
  const c = parseRedisConfig({ url: redis.url, commandTimeoutMs: 200, connectTimeoutMs: 200 });
  assert.ok(c.ok);
  const client = createRedisClient(c.config);
  clients.push(client);
  await new Promise((res) => client.once('ready', res));
  return new SharedBuckets({ client, domain, fallback: new TokenBuckets(() => performance.now()) });
}

/** Every replica asks every 20 ms for `ms`; the calls admitted, all replicas together. */
async function hammer(replicas: readonly SharedBuckets[], ms: number): Promise<number> {
  let admitted = 0;
  const until = Date.now() + ms;
  await Promise.all(
    replicas.map(async (r) => {
      while (Date.now() < until) {
        if ((await r.take([RULE], 'agent', true)).ok) admitted++;
        await new Promise((res) => setTimeout(res, 20));
      }
    }),
  );
  return admitted;
}

before(async () => {
  redis = await startRedis();
});
after(async () => {
  for (const c of clients) c.disconnect();
  await redis.close();
});

describe('shared rate limits through a Redis stall and an empty restart', () => {
  it('two replicas together stay within 1.5x the rule: each takes its share while Redis is away, and no fresh burst after', async () => {
    const began = Date.now();
    const replicas = [await replica('stall'), await replica('stall')];
    const log = captureStderr();
    let admitted: number;
    try {
      // Both seen by Redis, and half the burst used, as a running domain would be.
      admitted = await hammer(replicas, 300);
      assert.equal(admitted, RULE.burst, 'Redis decides: the burst, shared');
      redis.freeze();
      admitted += await hammer(replicas, 3000);
      await redis.restart();
      admitted += await hammer(replicas, 3000);
    } finally {
      redis.thaw();
      log.restore();
    }
    const elapsedMs = Date.now() - began;
    const allowed = RULE.burst + Math.floor(elapsedMs / RULE.msPerCall);
    assert.ok(admitted <= 1.5 * allowed, `${admitted} calls admitted in ${elapsedMs} ms; the rule allows ${allowed}`);
    assert.ok(
      log.lines.some((l) => l.includes('shared rate limits unavailable')),
      'the outage is logged',
    );
  });
});
