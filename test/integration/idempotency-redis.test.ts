/**
 * Idempotency records in a real redis-server under the faults that used to
 * run a keyed call twice, or leave a never-run key stuck: Redis restarted
 * empty after a call completed or while it ran, a claim stalled past its
 * deadline, and a replica that did not acknowledge the claim.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { idempotencyKeys } from '../../src/cache/keys.ts';
import type { RedisClient } from '../../src/cache/redis.ts';
import { readyClient } from '../helpers/redis-client.ts';
import { IdempotencyUnavailable, RedisIdempotencyStore } from '../../src/execution/idempotency-redis.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { replicaCaughtUp } from '../helpers/redis-topologies.ts';
import { captureStderr } from '../helpers/stderr.ts';

const RETENTION_MS = 60_000;
const LEASE_MS = 5_000;
let redis: RedisServer;
const clients: RedisClient[] = [];
let n = 0;

async function connect(commandTimeoutMs: number): Promise<RedisClient> {
  const client = await readyClient(redis.url, { commandTimeoutMs });
  clients.push(client);
  return client;
}

const store = (client: RedisClient, domain: string, waitReplicas = 0, timeoutMs = 1000) =>
  new RedisIdempotencyStore({ client, domain, retentionMs: RETENTION_MS, guard: { waitReplicas, timeoutMs } });

before(async () => {
  redis = await startRedis();
  await redis.command('CONFIG', 'SET', 'repl-diskless-sync-delay', '0');
});
after(async () => {
  for (const c of clients) c.disconnect();
  await redis.close();
});

describe('RedisIdempotencyStore under faults', () => {
  it('Redis restarted empty after a keyed call completed: the repeat is refused, never run again, on every replica that knew the records', async () => {
    const domain = `loss${++n}`;
    const [a, b] = [store(await connect(1000), domain), store(await connect(1000), domain)];
    const first = await a.claim('scope-done', 'digest', LEASE_MS);
    assert.equal(first.kind, 'acquired');
    await a.settle('scope-done', (first as { token: string }).token, { kind: 'completed', response: undefined });
    assert.equal((await b.claim('scope-done', 'digest', LEASE_MS)).kind, 'not_stored', 'b knows the records too');
    const log = captureStderr();
    try {
      await redis.restart();
      await new Promise((r) => setTimeout(r, 300));
      for (const s of [a, b]) {
        let answer: unknown;
        for (let i = 0; i < 40 && !(answer instanceof IdempotencyUnavailable); i++) {
          answer = await s.claim('scope-done', 'digest', LEASE_MS).then(
            (c) => c.kind,
            (e: unknown) => e,
          );
          assert.notEqual(answer, 'acquired', 'never a second run');
          if (!(answer instanceof IdempotencyUnavailable)) await new Promise((r) => setTimeout(r, 50));
        }
        assert.ok(answer instanceof IdempotencyUnavailable, 'the repeat is refused');
      }
      assert.ok(
        log.lines.some((l) => l.includes('the idempotency records in Redis were lost')),
        'and the loss is logged',
      );
    } finally {
      log.restore();
    }
  });

  it('Redis restarted empty while the call ran: settling finds nothing, and the repeat is refused', async () => {
    const domain = `inflight${++n}`;
    const s = store(await connect(1000), domain);
    const claim = await s.claim('scope-running', 'digest', LEASE_MS);
    assert.equal(claim.kind, 'acquired');
    const log = captureStderr();
    try {
      await redis.restart();
      await new Promise((r) => setTimeout(r, 300));
      await s
        .settle('scope-running', (claim as { token: string }).token, { kind: 'completed', response: undefined })
        .catch(() => {});
      let err: unknown;
      for (let i = 0; i < 40 && !(err instanceof IdempotencyUnavailable); i++) {
        err = await s.claim('scope-running', 'digest', LEASE_MS).then(
          (c) => c.kind,
          (e: unknown) => e,
        );
        assert.notEqual(err, 'acquired', 'never a second run');
        if (!(err instanceof IdempotencyUnavailable)) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(err instanceof IdempotencyUnavailable);
    } finally {
      log.restore();
    }
  });

  it('a claim stalled past its deadline is taken back when it runs late: the key is free, not call_in_progress then outcome_unknown', async () => {
    const domain = `stall${++n}`;
    const s = store(await connect(200), domain, 0, 200);
    assert.equal(
      (await s.claim('warm', 'digest', LEASE_MS)).kind,
      'acquired',
      'learns the marker; the script is loaded',
    );
    assert.match(await redis.command('CLIENT', 'PAUSE', '600', 'WRITE'), /^\+OK/);
    await assert.rejects(s.claim('scope-stalled', 'digest', LEASE_MS), IdempotencyUnavailable);
    // Past the pause, and past the second in which the client's breaker refuses without sending.
    await new Promise((r) => setTimeout(r, 1100));
    assert.match(
      await redis.command('EXISTS', idempotencyKeys(domain).record('scope-stalled')),
      /^:0/,
      'the late claim was taken back',
    );
    assert.equal((await s.claim('scope-stalled', 'digest', LEASE_MS)).kind, 'acquired', 'so the retry runs it, once');
  });

  it('with a replica to wait for that does not acknowledge the claim: unavailable, taken back, and claimable once it does', async () => {
    const domain = `wait${++n}`;
    // Set again: the tests before restarted the server.
    await redis.command('CONFIG', 'SET', 'repl-diskless-sync-delay', '0');
    const replica = await startRedis(['--replicaof', '127.0.0.1', String(redis.port)]);
    try {
      await replicaCaughtUp(redis.port);
      const s = store(await connect(2000), domain, 1, 1000);
      assert.equal((await s.claim('warm', 'digest', LEASE_MS)).kind, 'acquired');
      replica.freeze();
      try {
        await assert.rejects(s.claim('scope-unacked', 'digest', LEASE_MS), IdempotencyUnavailable);
        assert.match(
          await redis.command('EXISTS', idempotencyKeys(domain).record('scope-unacked')),
          /^:0/,
          'a failover to that replica would not know it: taken back',
        );
      } finally {
        replica.thaw();
      }
      let kind: string | undefined;
      for (let i = 0; i < 100 && kind === undefined; i++)
        kind = await s.claim('scope-unacked', 'digest', LEASE_MS).then(
          (c) => c.kind,
          () => undefined,
        );
      assert.equal(kind, 'acquired');
    } finally {
      await replica.close();
    }
  });
});
