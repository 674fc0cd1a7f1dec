import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { createRedisClient, parseRedisConfig, type RedisClient } from '../../src/cache/redis.ts';
import { RedisActivations } from '../../src/discovery/activations-redis.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';

describe('discovery activations shared through Redis', () => {
  let redis: RedisServer;
  let clients: RedisClient[] = [];
  let now = 1_000_000;

  const replica = async () => {
    const parsed = parseRedisConfig({ url: redis.url, commandTimeoutMs: 200 });
    assert.ok(parsed.ok);
    const client = createRedisClient(parsed.config);
    await once(client, 'ready');
    clients.push(client);
    return new RedisActivations({ client, domain: 'it', ttlMs: 60_000, timeoutMs: 500, now: () => now });
  };

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const c of clients) c.disconnect();
    clients = [];
    await redis.close();
  });

  it('shows what one replica activated to another, per revision and principal, until it expires', async () => {
    const [a, b] = [await replica(), await replica()];
    await a.activate(7, 'alice', ['rotate_keys', 'export_report']);
    assert.deepEqual([...(await b.active(7, 'alice'))].sort(), ['export_report', 'rotate_keys']);
    assert.equal((await b.active(7, 'bob')).size, 0, 'per principal');
    assert.equal((await b.active(8, 'alice')).size, 0, 'a new revision forgets every activation');
    now += 60_001;
    assert.equal((await b.active(7, 'alice')).size, 0, 'expired');
    const ttl = await redis.command('PTTL', (await redis.command('KEYS', 'tg:it:act:7:*')).split('\r\n')[2] as string);
    assert.match(ttl, /^:\d+\r\n$/, 'the key itself expires');
  });

  it('answers nothing, without throwing, when Redis is gone', async () => {
    const a = await replica();
    await redis.kill();
    await a.activate(7, 'alice', ['x']);
    assert.equal((await a.active(7, 'alice')).size, 0);
    await redis.restart();
  });
});
