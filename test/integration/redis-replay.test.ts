import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RedisReplayStore } from '../../src/auth/redis-replay-store.ts';
import { createRedisClient, parseRedisConfig } from '../../src/cache/redis.ts';
import type { RedisClient } from '../../src/cache/redis.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';

const COMMAND_TIMEOUT_MS = 200;
let redis: RedisServer;
let a: RedisClient;
let b: RedisClient;

before(async () => {
  redis = await startRedis();
  const c = parseRedisConfig({ url: redis.url, commandTimeoutMs: COMMAND_TIMEOUT_MS, connectTimeoutMs: 500 });
  assert.ok(c.ok);
  a = createRedisClient(c.config);
  b = createRedisClient(c.config);
  await Promise.all([a, b].map((x) => new Promise((res) => x.once('ready', res))));
});

after(async () => {
  a?.disconnect();
  b?.disconnect();
  await redis?.close();
});

describe('RedisReplayStore', () => {
  it('a one-time token id is claimed once across replicas, and expires with the token', async () => {
    const one = new RedisReplayStore({ client: a, domain: 'replay' });
    const two = new RedisReplayStore({ client: b, domain: 'replay' });
    assert.equal(await one.claim('jti-1', Date.now() + 60_000), true);
    assert.equal(await two.claim('jti-1', Date.now() + 60_000), false);
    assert.equal(await one.claim('jti-1', Date.now() + 60_000), false);
    const ttl = await a.pttl('tg:replay:jti:jti-1');
    assert.ok(ttl > 55_000 && ttl <= 60_000);
  });

  it('refuses ids it cannot record: expired, empty, too long, or an invalid domain', async () => {
    const s = new RedisReplayStore({ client: a, domain: 'replay' });
    assert.equal(await s.claim('old', Date.now() - 1), false);
    assert.equal(await s.claim('nan', Number.NaN), false);
    assert.equal(await s.claim('', Date.now() + 1000), false);
    assert.equal(await s.claim('x'.repeat(513), Date.now() + 1000), false);
    assert.equal(await new RedisReplayStore({ client: a, domain: 'bad}domain' }).claim('ok', Date.now() + 1000), false);
  });

  it('fails closed, promptly, when Redis hangs or is gone', async () => {
    const s = new RedisReplayStore({ client: a, domain: 'replay' });
    assert.match(await redis.command('CLIENT', 'PAUSE', '1000', 'ALL'), /^\+OK/);
    let t0 = performance.now();
    assert.equal(await s.claim('paused', Date.now() + 60_000), false);
    assert.ok(performance.now() - t0 < COMMAND_TIMEOUT_MS + 300);
    await redis.kill();
    t0 = performance.now();
    assert.equal(await s.claim('gone', Date.now() + 60_000), false);
    assert.ok(performance.now() - t0 < COMMAND_TIMEOUT_MS + 300);
  });
});
