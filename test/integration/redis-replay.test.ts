import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { RedisReplayStore } from '../../src/auth/redis-replay-store.ts';
import { breakerOf } from '../../src/cache/breaker.ts';
import { replayKeys } from '../../src/cache/keys.ts';
import type { RedisClient } from '../../src/cache/redis.ts';
import { readyClient } from '../helpers/redis-client.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { cli, replicaCaughtUp } from '../helpers/redis-topologies.ts';

const COMMAND_TIMEOUT_MS = 200;
let redis: RedisServer;
let a: RedisClient;
let b: RedisClient;
const clients: RedisClient[] = [];
const servers: RedisServer[] = [];

async function connect(url: string, commandTimeoutMs = COMMAND_TIMEOUT_MS): Promise<RedisClient> {
  const client = await readyClient(url, { commandTimeoutMs, connectTimeoutMs: 500 });
  clients.push(client);
  return client;
}

async function waitUntil(ok: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await ok()) return;
    await sleep(50);
  }
  assert.fail('timed out');
}

const store = (client: RedisClient, waitReplicas = 0, timeoutMs = COMMAND_TIMEOUT_MS) =>
  new RedisReplayStore({ client, domain: 'replay', timeoutMs, waitReplicas });

before(async () => {
  redis = await startRedis();
  servers.push(redis);
  // Replicas started by the tests sync at once, not after the default 5 s wait for more of them.
  await cli(redis.port, 'CONFIG', 'SET', 'repl-diskless-sync-delay', '0');
  [a, b] = await Promise.all([connect(redis.url), connect(redis.url)]);
});

after(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all(servers.map((s) => s.close()));
});

describe('RedisReplayStore', () => {
  it('a one-time token id is claimed once across replicas, and expires with the token', async () => {
    const one = store(a);
    const two = store(b);
    const issued = Date.now();
    assert.equal(await one.claim('jti-1', Date.now() + 60_000, issued), 'claimed');
    assert.equal(await two.claim('jti-1', Date.now() + 60_000, issued), 'refused');
    assert.equal(await one.claim('jti-1', Date.now() + 60_000, issued), 'refused');
    const ttl = await a.pttl(replayKeys('replay', 'jti-1').record);
    assert.ok(ttl > 55_000 && ttl <= 60_000);
  });

  it('refuses ids it cannot record: expired, empty, too long, or an invalid domain', async () => {
    const s = store(a);
    const now = Date.now();
    assert.equal(await s.claim('old', Date.now() - 1, now), 'refused');
    assert.equal(await s.claim('nan', Number.NaN, now), 'refused');
    assert.equal(await s.claim('', Date.now() + 1000, now), 'refused');
    assert.equal(await s.claim('x'.repeat(513), Date.now() + 1000, now), 'refused');
    assert.equal(
      await new RedisReplayStore({ client: a, domain: 'bad}domain', timeoutMs: COMMAND_TIMEOUT_MS }).claim(
        'ok',
        Date.now() + 1000,
        now,
      ),
      'refused',
    );
  });

  it('with replicas to wait for, an id no replica acknowledged is not accepted, and is forgotten so a retry can claim it', async () => {
    const s = store(a, 1);
    const issued = Date.now();
    assert.equal(await s.claim('unacked', Date.now() + 60_000, issued), 'unavailable');
    assert.equal(await a.exists(replayKeys('replay', 'unacked').record), 0);
    const replica = await startRedis(['--replicaof', '127.0.0.1', String(redis.port)]);
    servers.push(replica);
    await replicaCaughtUp(redis.port);
    // Semantics, not timing: a client and a claim deadline a loaded machine cannot miss (WAIT gets half).
    const patient = store(await connect(redis.url, 10_000), 1, 5_000);
    assert.equal(await patient.claim('unacked', Date.now() + 60_000, issued), 'claimed');
    assert.equal(await patient.claim('unacked', Date.now() + 60_000, issued), 'refused');
    const onReplica = await connect(replica.url);
    assert.equal(
      await store(onReplica).claim('on-replica', Date.now() + 60_000, issued),
      'unavailable',
      'a replica cannot record an id',
    );
    await replica.close();
  });

  it("WAIT never outlasts the client's own command timeout: a slow acknowledgement is unavailable and forgotten, never a failed WAIT left recorded", async () => {
    const replica = await startRedis(['--replicaof', '127.0.0.1', String(redis.port)]);
    servers.push(replica);
    await replicaCaughtUp(redis.port);
    // The store may wait 5 s, but the client gives up on any command after 200 ms.
    const s = store(a, 1, 5_000);
    replica.freeze();
    try {
      const began = Date.now();
      assert.equal(await s.claim('slow-ack', Date.now() + 60_000, Date.now()), 'unavailable');
      assert.ok(Date.now() - began < 5_000, "answered within the client's bound, not the store's");
      await waitUntil(async () => (await a.exists(replayKeys('replay', 'slow-ack').record)) === 0);
    } finally {
      replica.thaw();
    }
    await replicaCaughtUp(redis.port);
    assert.equal(
      await store(await connect(redis.url, 10_000), 1, 5_000).claim('slow-ack', Date.now() + 60_000, Date.now()),
      'claimed',
      'a retry once the replica answers is a first use',
    );
    await replica.close();
  });

  it('after Redis lost its data, tokens issued before the loss cannot be vouched for; later ones can', async () => {
    const s = store(a);
    const other = store(b);
    const before = Date.now();
    assert.equal(await s.claim('pre-loss', Date.now() + 60_000, before), 'claimed');
    assert.equal(await other.claim('pre-loss-other', Date.now() + 60_000, before), 'claimed');
    await redis.restart();
    await new Promise((res) => a.once('ready', res));
    assert.equal(
      await s.claim('pre-loss', Date.now() + 60_000, before),
      'unavailable',
      'the record of its use is gone: not a first use',
    );
    await sleep(5);
    assert.equal(await s.claim('post-loss', Date.now() + 60_000, Date.now()), 'claimed');
    assert.equal(
      await other.claim('pre-loss-other', Date.now() + 60_000, before),
      'unavailable',
      'another replica notices the new epoch too',
    );
  });

  it('a claim that reaches Redis after it lost its data records nothing, even when no reconnection told the replica', async () => {
    const s = store(a);
    const before = Date.now();
    assert.equal(await s.claim('flushed', Date.now() + 60_000, before), 'claimed');
    // FLUSHALL loses the records without closing any connection: no 'ready' event, nothing re-read.
    await cli(redis.port, 'FLUSHALL');
    assert.equal(
      await s.claim('flushed', Date.now() + 60_000, before),
      'unavailable',
      'a replay after the loss is not a first use',
    );
    assert.equal(await s.claim('flushed', Date.now() + 60_000, before), 'unavailable', 'nor is its retry');
    await sleep(5);
    assert.equal(await s.claim('after-flush', Date.now() + 60_000, Date.now()), 'claimed');
  });

  it('a Cluster-style partial loss is noticed for a shard this replica never claimed in', async () => {
    const s = store(a);
    const other = store(b);
    const before = Date.now();
    // `b` claims in one shard; `a` has never claimed there but learnt every shard's marker.
    assert.equal(await s.claim('warm-a', Date.now() + 60_000, before), 'claimed');
    const jti = 'used-via-b';
    assert.equal(await other.claim(jti, Date.now() + 60_000, before), 'claimed');
    const { marker, record } = replayKeys('replay', jti);
    await cli(redis.port, 'DEL', marker, record);
    assert.equal(await s.claim(jti, Date.now() + 60_000, before), 'unavailable');
  });

  it('a claim answered unavailable does not burn the token when Redis records it after the deadline', async () => {
    const s = store(a);
    assert.equal(await s.claim('warm-late', Date.now() + 60_000, Date.now()), 'claimed');
    assert.match(await redis.command('CLIENT', 'PAUSE', String(COMMAND_TIMEOUT_MS * 2), 'WRITE'), /^\+OK/);
    assert.equal(await s.claim('late', Date.now() + 60_000, Date.now()), 'unavailable');
    // The paused script runs when the pause ends; its record is then taken back.
    await sleep(COMMAND_TIMEOUT_MS * 2);
    let again = 'unavailable';
    for (let i = 0; i < 40 && again !== 'claimed'; i++) {
      again = await s.claim('late', Date.now() + 60_000, Date.now());
      if (again !== 'claimed') await sleep(25);
    }
    assert.equal(again, 'claimed', 'the retry the 503 invited is a first use');
  });

  it('while Redis is known to be stalled, claims are refused without being sent, and one a second later probes', async () => {
    const client = await connect(redis.url);
    const s = store(client);
    assert.equal(await s.claim('warm-breaker', Date.now() + 60_000, Date.now()), 'claimed');
    const source = new Redis(redis.port, '127.0.0.1');
    const monitor = await source.monitor();
    source.disconnect();
    monitor.on('error', () => {});
    const seen: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => seen.push(args.join(' ')));
    try {
      redis.freeze();
      try {
        assert.equal(await s.claim('breaker-stalled', Date.now() + 60_000, Date.now()), 'unavailable');
        assert.equal(breakerOf(client).open, true);
        assert.equal(await s.claim('breaker-refused', Date.now() + 60_000, Date.now()), 'unavailable');
      } finally {
        redis.thaw();
      }
      // What was sent runs now; the stalled claim's take-back follows it.
      await waitUntil(async () => seen.some((c) => c.includes(replayKeys('replay', 'breaker-stalled').record)));
      // Past the breaker's second: the next claim is its probe, and the probe itself reaches Redis.
      await sleep(1100);
      assert.equal(
        await s.claim('breaker-refused', Date.now() + 60_000, Date.now()),
        'claimed',
        'the probe after the stall closes the breaker',
      );
      assert.equal(breakerOf(client).open, false);
      const refused = replayKeys('replay', 'breaker-refused').record;
      await waitUntil(async () => seen.some((c) => c.includes(refused)));
      assert.equal(
        seen.filter((c) => /^evalsha /i.test(c) && c.includes(refused)).length,
        1,
        'only the claim after the stall was sent',
      );
    } finally {
      monitor.disconnect();
    }
  });

  it('fails closed, promptly, when Redis hangs or is gone', async () => {
    const s = store(a);
    assert.match(await redis.command('CLIENT', 'PAUSE', '1000', 'ALL'), /^\+OK/);
    let t0 = performance.now();
    assert.equal(await s.claim('paused', Date.now() + 60_000, Date.now()), 'unavailable');
    assert.ok(performance.now() - t0 < COMMAND_TIMEOUT_MS + 300);
    await redis.kill();
    t0 = performance.now();
    assert.equal(await s.claim('gone', Date.now() + 60_000, Date.now()), 'unavailable');
    assert.ok(performance.now() - t0 < COMMAND_TIMEOUT_MS + 300);
  });
});
