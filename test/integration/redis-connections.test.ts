/**
 * A policy-mode sidecar holds two Redis connections, whatever it uses Redis
 * for: one command connection (grants, activations, one-time tokens,
 * approvals, idempotency, tasks, pins, rate limits, publishing) and one
 * subscriber carrying every channel (grant revisions and the list-changed
 * relay). Counted with CLIENT LIST against a real redis-server and a real
 * Cluster, with deferred discovery on so both channels are in use; then both
 * channels are shown to work over that one subscriber, before and after
 * every connection was killed with CLIENT KILL and came back.
 *
 * The revision check interval is 30 s here: a change seen within a couple of
 * seconds was heard on the subscriber, not read by the periodic check.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run as grantsCli, type GrantsIo } from '../../src/commands/grants.ts';
import { startCatalogueServer, tool, type CatalogueServer } from '../helpers/catalogue-servers.ts';
import { listen, MODERN_META, modernHeaders, type ListenStream } from '../helpers/listen-stream.ts';
import { post } from '../helpers/raw.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { cli, startCluster, type RedisCluster } from '../helpers/redis-topologies.ts';
import { sha256 } from '../helpers/static-keys.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';
import { waitFor } from '../helpers/wait.ts';

const ALICE = 'alice-connections-4c6e8a0b2d4f';
const BOB = 'bob-connections-7e9a1c3e5b7d';
const DOMAIN = 'conn';
const CHANNELS = [`{tg:${DOMAIN}}:rev:changed`, `tg:${DOMAIN}:listchanged`];
const CHANGED = 'notifications/tools/list_changed';
/** Well below the 30 s check interval: only the subscriber delivers this fast. */
const HEARD_WITHIN_MS = 3000;

interface Client {
  readonly id: string;
  readonly name: string;
  readonly cmd: string;
}

/** The sidecars' connections on one node: CLIENT LIST without the asking connection and the CLI's short-lived ones. */
async function clients(port: number): Promise<Client[]> {
  const list = await cli(port, 'CLIENT', 'LIST');
  return list
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => {
      const field = (k: string) => new RegExp(`(?:^| )${k}=(\\S*)`).exec(line)?.[1] ?? '';
      return { id: field('id'), name: field('name'), cmd: field('cmd') };
    })
    .filter(
      (c) => c.cmd !== 'client|list' && !c.name.endsWith('-cli') && !c.name.startsWith('ioredis-cluster(refresher)'),
    );
}

async function grants(url: string, action: string, ...argv: string[]): Promise<void> {
  let err = '';
  const io: GrantsIo = { env: {}, stdout: { write: () => true }, stderr: { write: (s: string) => ((err += s), true) } };
  assert.equal(await grantsCli([action, '--redis-url', url, '--domain', DOMAIN, ...argv], io), 0, err);
}

const searchBody = (id: number, query: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'search_tools', arguments: { query, limit: 1 }, _meta: MODERN_META },
  });

/** The tools a search through `gate` finds for `key`: filtered by the grants that replica trusts now. */
async function found(gate: RunningToolgate, key: string, query: string): Promise<string[]> {
  const res = await post(gate.url, searchBody(1, query), modernHeaders('tools/call', key, 'search_tools'));
  assert.equal(res.status, 200, res.text);
  return (res.json().result as { structuredContent: { tools: { name: string }[] } }).structuredContent.tools.map(
    (t) => t.name,
  );
}

/** Resolves once `stream` has had more than `before` list_changed notifications; fails after `ms`. */
async function heard(stream: ListenStream, before: number, what: string, ms = HEARD_WITHIN_MS): Promise<void> {
  await waitFor(() => stream.count(CHANGED) > before, what, ms);
}

interface Topology {
  readonly url: string;
  /** Every node's port. */
  readonly ports: readonly number[];
  close(): Promise<void>;
}

/**
 * The checks, for one topology. Replica `b` holds alice's listen stream;
 * replica `a` is the other replica of the domain, whose discoveries reach `b`
 * only through the relay. `perNode(n)` asserts the connections of `n` sidecars.
 */
function connectionSuite(
  name: string,
  open: () => Promise<Topology>,
  perNode: (topology: Topology, sidecars: number) => Promise<void>,
): void {
  describe(name, () => {
    let dir: string;
    let topology: Topology;
    let upstream: CatalogueServer;
    let a: RunningToolgate | undefined;
    let b: RunningToolgate | undefined;
    let stream: ListenStream | undefined;

    const start = async () => {
      const gate = await startToolgate(upstream.url.replace(/\/mcp$/, ''), [
        '--policy-file',
        join(dir, 'policy.yaml'),
        '--redis-url',
        topology.url,
        '--grant-source',
        'redis',
        '--policy-domain',
        DOMAIN,
        '--deferred-tools',
        'true',
        '--grants-staleness-ms',
        '60000',
        '--grants-check-interval-ms',
        '30000',
      ]);
      await gate.ready;
      return gate;
    };

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'toolgate-connections-'));
      await writeFile(
        join(dir, 'keys.yaml'),
        `keys:\n  - { sha256: ${sha256(ALICE)}, principal: alice, scopes: [tools] }\n  - { sha256: ${sha256(BOB)}, principal: bob, scopes: [tools] }\n`,
      );
      await writeFile(join(dir, 'policy.yaml'), 'version: 1\nauthentication:\n  staticKeys: { file: keys.yaml }\n');
      [topology, upstream] = await Promise.all([
        open(),
        startCatalogueServer({
          era: '2026',
          tools: [tool('alpha'), tool('rotate_keys', { description: 'Rotate the signing keys of a repository' })],
        }),
      ]);
      for (const t of ['alpha', 'rotate_keys'])
        await grants(topology.url, 'set', '--principal', '*', '--tool', t, '--scopes', 'tools', '--effect', 'allow');
    });
    after(async () => {
      stream?.close();
      await Promise.all([a?.close(), b?.close()]);
      await upstream?.close();
      await topology?.close();
      await rm(dir, { recursive: true, force: true });
    });

    /** A discovery through `a` reaches alice's stream on `b` (the relay); a revoke and a restore reach `b` (revisions). */
    const bothChannelsWork = async () => {
      const s = stream as ListenStream;
      const gateA = a as RunningToolgate;
      const gateB = b as RunningToolgate;
      let before = s.count(CHANGED);
      assert.deepEqual(await found(gateA, ALICE, 'rotate signing keys'), ['rotate_keys']);
      await heard(s, before, 'the relayed list change on the other replica');

      before = s.count(CHANGED);
      await grants(
        topology.url,
        'delete',
        '--principal',
        '*',
        '--tool',
        'rotate_keys',
        '--scopes',
        'tools',
        '--effect',
        'allow',
      );
      await heard(s, before, 'the revoke, heard as a revision on the subscriber');
      // Bob searches, so alice's stream hears nothing of it.
      assert.deepEqual(await found(gateB, BOB, 'rotate signing keys'), [], 'the revoked grant is no longer served');

      before = s.count(CHANGED);
      await grants(
        topology.url,
        'set',
        '--principal',
        '*',
        '--tool',
        'rotate_keys',
        '--scopes',
        'tools',
        '--effect',
        'allow',
      );
      await heard(s, before, 'the restore, heard as a revision on the subscriber');
      assert.deepEqual(await found(gateB, BOB, 'rotate signing keys'), ['rotate_keys']);
    };

    const subscribed = async () => {
      let total = 0;
      for (const port of topology.ports) {
        const reply = (await cli(port, 'PUBSUB', 'NUMSUB', ...CHANNELS)).split('\n');
        total += Number(reply[1]) + Number(reply[3]);
      }
      return total;
    };

    it('one sidecar holds one command connection and one subscriber', { timeout: 30_000 }, async () => {
      b = await start();
      stream = await listen(b.url, ALICE, 'listen-b');
      await stream.next('notifications/subscriptions/acknowledged');
      // Every Redis user in the sidecar has been asked something: grants, activations, the relay.
      assert.deepEqual(await found(b, BOB, 'rotate signing keys'), ['rotate_keys']);
      await waitFor(async () => (await subscribed()) === 2, 'both channels subscribed');
      await perNode(topology, 1);

      a = await start();
      await waitFor(async () => (await subscribed()) === 4, 'both channels subscribed by both replicas');
      await perNode(topology, 2);
    });

    it('revisions and relayed list changes both arrive over that subscriber', { timeout: 30_000 }, async () => {
      await bothChannelsWork();
    });

    it(
      'after CLIENT KILL of every connection, both come back, still two connections per sidecar',
      { timeout: 60_000 },
      async () => {
        const idsBefore = new Set((await Promise.all(topology.ports.map(clients))).flat().map((c) => c.id));
        let killed = 0;
        for (const port of topology.ports) {
          for (const type of ['normal', 'pubsub'])
            killed += Number(/\d+/.exec(await cli(port, 'CLIENT', 'KILL', 'TYPE', type, 'SKIPME', 'yes'))?.[0] ?? 0);
        }
        assert.ok(killed >= 4, `killed ${killed} connections`);
        await waitFor(
          async () => (await subscribed()) === 4,
          'both channels subscribed again by both replicas',
          15_000,
        );
        const idsAfter = (await Promise.all(topology.ports.map(clients))).flat().map((c) => c.id);
        assert.ok(
          idsAfter.every((id) => !idsBefore.has(id)),
          'every connection is a new one',
        );
        await bothChannelsWork();
        await perNode(topology, 2);
      },
    );
  });
}

connectionSuite(
  'policy mode against a standalone Redis',
  async () => {
    const redis: RedisServer = await startRedis();
    return { url: redis.url, ports: [redis.port], close: () => redis.close() };
  },
  async (topology, sidecars) => {
    const names = (await clients(topology.ports[0] as number)).map((c) => c.name).sort();
    assert.deepEqual(
      names,
      [...Array(sidecars).fill('toolgate-shared'), ...Array(sidecars).fill('toolgate-subscriber')],
      `${sidecars} sidecar(s): ${names.join(', ')}`,
    );
  },
);

connectionSuite(
  'policy mode against a Redis Cluster (three masters)',
  async () => {
    const cluster: RedisCluster = await startCluster(3, 0);
    return { url: cluster.url, ports: cluster.nodes.map((n) => n.port), close: () => cluster.close() };
  },
  async (topology, sidecars) => {
    const SUBSCRIBER = 'ioredis-cluster(subscriber):toolgate-shared';
    let subscribers = 0;
    for (const port of topology.ports) {
      const names = (await clients(port)).map((c) => c.name);
      assert.ok(
        names.every((n) => n === 'toolgate-shared' || n === SUBSCRIBER),
        `node ${port}: ${names.join(', ')}`,
      );
      const commands = names.filter((n) => n === 'toolgate-shared').length;
      assert.ok(commands <= sidecars, `node ${port}: ${commands} command connections for ${sidecars} sidecar(s)`);
      subscribers += names.filter((n) => n === SUBSCRIBER).length;
    }
    assert.equal(subscribers, sidecars, 'one subscriber connection per sidecar, on one node');
  },
);
