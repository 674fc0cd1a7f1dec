/**
 * Contract pins in a real redis-server under the faults that would let a
 * changed contract be trusted: the hash lost (restarted empty) between two
 * reads, a pin write stalled past its deadline, and a replica that did not
 * acknowledge it. Pins follow the same discipline as token claims.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { domainKeys } from '../../src/cache/keys.ts';
import type { RedisClient } from '../../src/cache/redis.ts';
import { readyClient } from '../helpers/redis-client.ts';
import { RedisPinStore, type Pin } from '../../src/catalogue/contracts/pins.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { replicaCaughtUp } from '../helpers/redis-topologies.ts';

let redis: RedisServer;
const clients: RedisClient[] = [];
let n = 0;
const pin = (c: string): Pin => ({ digest: c.repeat(64), by: 'first-seen', at: 1 });

async function connect(commandTimeoutMs: number): Promise<RedisClient> {
  const client = await readyClient(redis.url, { commandTimeoutMs });
  clients.push(client);
  return client;
}

before(async () => {
  redis = await startRedis();
});
after(async () => {
  for (const c of clients) c.disconnect();
  await redis.close();
});

describe('RedisPinStore under faults', () => {
  it('pins first-seen once, and after the hash was lost pins nothing until the pins are read again', async () => {
    const domain = `loss${++n}`;
    const store = new RedisPinStore(await connect(1000), domain, { waitReplicas: 0, timeoutMs: 1000 });
    assert.deepEqual(await store.all(), new Map());
    assert.deepEqual(await store.pinFirst('a', pin('a')), pin('a'));
    assert.deepEqual(await store.pinFirst('a', pin('b')), pin('a'), 'the first pin stands');
    await redis.restart();
    await new Promise((r) => setTimeout(r, 300));
    let answer: Pin | 'failed' | 'failed-once' = 'failed';
    for (let i = 0; i < 50 && answer === 'failed'; i++)
      answer = await store.pinFirst('a', pin('b')).then(
        (p) => p ?? 'failed-once',
        () => 'failed',
      );
    assert.equal(
      answer,
      'failed-once',
      'a store that lost its pins takes no first-seen pin before the caller has read and written back what it holds',
    );
    assert.match(await redis.command('HEXISTS', domainKeys(domain).contractPins, 'a'), /^:0/);
    await store.all();
    assert.deepEqual(await store.pinFirst('c', pin('c')), pin('c'), 'once read again, pins are taken');
  });

  it('a pin write stalled past its deadline is taken back when it runs late', async () => {
    const domain = `stall${++n}`;
    const store = new RedisPinStore(await connect(200), domain, { waitReplicas: 0, timeoutMs: 200 });
    await store.all();
    assert.ok(await store.pinFirst('warm', pin('a')), 'learns the marker; the script is loaded');
    assert.ok(await store.approve('held', pin('a')));
    assert.match(await redis.command('CLIENT', 'PAUSE', '600', 'WRITE'), /^\+OK/);
    assert.equal(await store.pinFirst('late', pin('b')), undefined);
    await new Promise((r) => setTimeout(r, 800));
    assert.match(
      await redis.command('HEXISTS', domainKeys(domain).contractPins, 'late'),
      /^:0/,
      'the late first-seen pin was taken back',
    );
    assert.match(await redis.command('CLIENT', 'PAUSE', '600', 'WRITE'), /^\+OK/);
    assert.equal(await store.approve('held', { ...pin('c'), by: 'operator' }), false);
    await new Promise((r) => setTimeout(r, 800));
    assert.deepEqual(
      (await store.all())?.get('held'),
      pin('a'),
      'the late approval was taken back: the pin it replaced stands',
    );
  });

  it('with a replica to wait for that does not acknowledge: no pin, taken back, pinned once it does', async () => {
    const domain = `wait${++n}`;
    await redis.command('CONFIG', 'SET', 'repl-diskless-sync-delay', '0');
    const replica = await startRedis(['--replicaof', '127.0.0.1', String(redis.port)]);
    try {
      await replicaCaughtUp(redis.port);
      const store = new RedisPinStore(await connect(2000), domain, { waitReplicas: 1, timeoutMs: 1000 });
      await store.all();
      assert.ok(await store.pinFirst('warm', pin('a')));
      replica.freeze();
      try {
        assert.equal(await store.pinFirst('unacked', pin('b')), undefined);
        assert.match(
          await redis.command('HEXISTS', domainKeys(domain).contractPins, 'unacked'),
          /^:0/,
          'a failover to that replica would not know it: taken back',
        );
      } finally {
        replica.thaw();
      }
      let pinned: Pin | undefined;
      for (let i = 0; i < 100 && pinned === undefined; i++) pinned = await store.pinFirst('unacked', pin('b'));
      assert.deepEqual(pinned, pin('b'));
    } finally {
      await replica.close();
    }
  });
});
