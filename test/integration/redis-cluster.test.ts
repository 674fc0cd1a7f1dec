/**
 * Grants and one-time tokens through a real Redis Cluster (three masters, no
 * replicas). When the master serving the domain's slot dies, ioredis retries
 * CLUSTERDOWN and closed connections on its own, past the per-node command
 * timeout: every command on the request path must still give up within the
 * configured command timeout.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RedisReplayStore } from '../../src/auth/redis-replay-store.ts';
import { replayKeys } from '../../src/cache/keys.ts';
import type { Principal } from '../../src/auth/types.ts';
import { createRedisClient, parseRedisConfig, type RedisClient } from '../../src/cache/redis.ts';
import { run as grantsCli, type GrantsIo } from '../../src/commands/grants.ts';
import { createRedisGrantStore } from '../../src/grants/redis-store.ts';
import type { GrantStore } from '../../src/grants/store.ts';
import { cli, startCluster, type RedisCluster } from '../helpers/redis-topologies.ts';

const COMMAND_TIMEOUT_MS = 300;
/** Scheduling slack on a shared machine; the defect took 1.6–3.3 s. */
const SLACK_MS = 400;

describe('Redis Cluster: a dead slot owner', () => {
  let cluster: RedisCluster;
  let store: GrantStore;
  let client: RedisClient;

  before(async () => {
    cluster = await startCluster(3, 0);
    let err = '';
    const io: GrantsIo = {
      env: {},
      stdout: { write: () => true },
      stderr: { write: (s: string) => ((err += s), true) },
    };
    assert.equal(
      await grantsCli(
        [
          'set',
          '--redis-url',
          cluster.url,
          '--domain',
          'it',
          '--principal',
          '*',
          '--tool',
          'search',
          '--effect',
          'allow',
        ],
        io,
      ),
      0,
      err,
    );
    const config = parseRedisConfig({ url: cluster.url, commandTimeoutMs: COMMAND_TIMEOUT_MS, connectTimeoutMs: 1000 });
    assert.ok(config.ok);
    const opened = await createRedisGrantStore({
      redis: config.config,
      domain: 'it',
      stalenessMs: 5000,
      checkIntervalMs: 200,
    });
    assert.ok(opened.ok);
    store = opened.store;
    client = createRedisClient(config.config);
    await new Promise((res) => client.once('ready', res));
  });
  after(async () => {
    await store?.close();
    client?.disconnect();
    await cluster?.close();
  });

  it('grant lookups and one-time-token claims fail within the command timeout', async () => {
    const agent = (id: string): Principal => ({ id, scopes: new Set(), credentialStrength: 'static' });
    assert.equal(((await store.snapshot(agent('first'))) as { ok: boolean }).ok, true);
    const replay = new RedisReplayStore({ client, domain: 'it', timeoutMs: COMMAND_TIMEOUT_MS });
    assert.equal(await replay.claim('warm', Date.now() + 60_000, Date.now()), 'claimed');

    const owner = await cluster.ownerOf('{tg:it}:rev');
    const alive = cluster.nodes.find((n) => n !== owner) as (typeof cluster.nodes)[number];
    // A token id whose key lives on the node about to die.
    let jti = '';
    for (let i = 0; jti === ''; i++) {
      if ((await cluster.ownerOf(replayKeys('it', `t${i}`).record)) === owner) jti = `t${i}`;
    }
    await owner.kill();
    assert.match(await cli(alive.port, 'PING'), /PONG/);

    const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
      const t0 = performance.now();
      const v = await work();
      return [v, performance.now() - t0];
    };
    for (let round = 0; round < 3; round++) {
      const [rows, rowsMs] = await timed(() => store.rowsForTool('search'));
      const [snap, snapMs] = await timed(async () => store.snapshot(agent(`new-${round}`)));
      const [claim, claimMs] = await timed(() => replay.claim(jti, Date.now() + 60_000, Date.now()));
      assert.ok(rows === undefined || Array.isArray(rows));
      assert.equal((snap as { ok: boolean }).ok, false);
      assert.equal(claim, 'unavailable');
      for (const [what, ms] of [
        ['rowsForTool', rowsMs],
        ['snapshot', snapMs],
        ['claim', claimMs],
      ] as const) {
        assert.ok(ms <= COMMAND_TIMEOUT_MS + SLACK_MS, `${what} took ${Math.round(ms)} ms in round ${round}`);
      }
    }
  });
});
