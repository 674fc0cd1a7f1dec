/**
 * Real Redis Sentinel and Cluster deployments on loopback, for integration
 * tests and the chaos suite. Sentinel runs as `redis-server --sentinel` (the
 * same binary Debian's redis-sentinel package links to), the Cluster is built
 * with `redis-cli --cluster create`. Every process is a `RedisServer` from
 * redis.ts, so each is killed when the test process exits.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePort } from './ports.ts';
import { startRedis, startRedisProcess, type RedisServer } from './redis.ts';
import { waitFor } from './wait.ts';

const run = promisify(execFile);

export const MASTER_NAME = 'mymaster';

export interface SentinelSet {
  /** The master at start; after a failover, the replica is the master. */
  readonly master: RedisServer;
  readonly replica: RedisServer;
  readonly sentinels: readonly RedisServer[];
  /** `redis+sentinel://…/mymaster` naming all three sentinels. */
  readonly url: string;
  /** The port Sentinel names as master now. */
  masterPort(): Promise<number>;
  /** `SENTINEL failover`: a graceful switch; resolves once every sentinel names the new master. */
  failover(): Promise<number>;
  /** Waits until every sentinel names a master other than `oldPort`. */
  switched(oldPort: number, timeoutMs: number): Promise<number>;
  close(): Promise<void>;
}

/** One master, one replica, three sentinels (quorum 2) that declare a master down after `downAfterMs`. */
export async function startSentinelSet(downAfterMs = 1000): Promise<SentinelSet> {
  const master = await startRedis();
  const replica = await startRedis(['--replicaof', '127.0.0.1', String(master.port)]);
  await until(
    async () => /master_link_status:up/.test(await cli(replica.port, 'INFO', 'replication')),
    10_000,
    'replica never synced',
  );
  const sentinels: RedisServer[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-sentinel-'));
    const conf = join(dir, 'sentinel.conf');
    writeFileSync(
      conf,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${master.port} 2`,
        `sentinel down-after-milliseconds ${MASTER_NAME} ${downAfterMs}`,
        `sentinel failover-timeout ${MASTER_NAME} 10000`,
        `sentinel parallel-syncs ${MASTER_NAME} 1`,
        '',
      ].join('\n'),
    );
    sentinels.push(await startRedisProcess(port, [conf, '--sentinel']));
  }
  const addr = async (s: RedisServer) =>
    Number((await cli(s.port, 'SENTINEL', 'get-master-addr-by-name', MASTER_NAME)).split('\n')[1]);
  const masterPort = () => addr(sentinels[0] as RedisServer);
  // Sentinels must know each other and the replica before a failover can be agreed.
  await until(
    async () => {
      const info = (await cli((sentinels[0] as RedisServer).port, 'SENTINEL', 'master', MASTER_NAME)).split('\n');
      const field = (name: string) => info[info.indexOf(name) + 1];
      return field('num-other-sentinels') === '2' && field('num-slaves') === '1';
    },
    15_000,
    'sentinels never discovered each other and the replica',
  );
  const switched = async (oldPort: number, timeoutMs: number) => {
    let now = oldPort;
    await until(
      async () => {
        const ports = await Promise.all(sentinels.map(addr));
        now = ports[0] as number;
        return ports.every((p) => p === now && p !== oldPort);
      },
      timeoutMs,
      'no failover happened',
    );
    return now;
  };
  return {
    master,
    replica,
    sentinels,
    url: `redis+sentinel://${sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/${MASTER_NAME}`,
    masterPort,
    async failover() {
      const before = await masterPort();
      await cli((sentinels[0] as RedisServer).port, 'SENTINEL', 'failover', MASTER_NAME);
      return switched(before, 15_000);
    },
    switched,
    async close() {
      await Promise.all([...sentinels, master, replica].map((s) => s.close()));
    },
  };
}

export interface RedisCluster {
  readonly nodes: readonly RedisServer[];
  /** `redis+cluster://…` naming every node. */
  readonly url: string;
  /** The node serving the slot of `key` (as master). */
  ownerOf(key: string): Promise<RedisServer>;
  /** The replicas of a master. */
  replicasOf(master: RedisServer): Promise<RedisServer[]>;
  close(): Promise<void>;
}

/** `masters` masters, each with `replicasPerMaster` replicas, all slots covered. */
export async function startCluster(
  masters: number,
  replicasPerMaster: number,
  nodeTimeoutMs = 1000,
): Promise<RedisCluster> {
  const count = masters * (1 + replicasPerMaster);
  const nodes = await Promise.all(
    Array.from({ length: count }, () =>
      startRedis([
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        String(nodeTimeoutMs),
      ]),
    ),
  );
  await run(
    'redis-cli',
    [
      '--cluster',
      'create',
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      '--cluster-replicas',
      String(replicasPerMaster),
      '--cluster-yes',
    ],
    { timeout: 30_000 },
  );
  await until(
    async () => {
      const states = await Promise.all(nodes.map((n) => cli(n.port, 'CLUSTER', 'INFO')));
      return states.every((s) => s.includes('cluster_state:ok'));
    },
    20_000,
    'cluster never reached cluster_state:ok',
  );
  return {
    nodes,
    url: `redis+cluster://${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`,
    async ownerOf(key) {
      const first = (nodes[0] as RedisServer).port;
      const slot = Number(await cli(first, 'CLUSTER', 'KEYSLOT', key));
      for (const line of (await cli(first, 'CLUSTER', 'NODES')).split('\n')) {
        const fields = line.trim().split(' ');
        if (!(fields[2] ?? '').includes('master')) continue;
        const port = Number(/:(\d+)@/.exec(fields[1] ?? '')?.[1]);
        for (const range of fields.slice(8)) {
          const [lo, hi] = range.split('-').map(Number);
          if (lo !== undefined && slot >= lo && slot <= (hi ?? lo)) {
            const owner = nodes.find((n) => n.port === port);
            if (owner !== undefined) return owner;
          }
        }
      }
      throw new Error(`no master serves the slot of ${key}`);
    },
    async replicasOf(master) {
      const lines = (await cli(master.port, 'CLUSTER', 'NODES')).split('\n').map((l) => l.trim().split(' '));
      const id = lines.find((f) => (f[2] ?? '').includes('myself'))?.[0];
      const ports = new Set(
        lines
          .filter((f) => (f[2] ?? '').includes('slave') && f[3] === id)
          .map((f) => Number(/:(\d+)@/.exec(f[1] ?? '')?.[1])),
      );
      return nodes.filter((n) => ports.has(n.port));
    },
    async close() {
      await Promise.all(nodes.map((n) => n.close()));
    },
  };
}

/**
 * Until the master on `port` holds an acknowledgement from an online replica
 * for every byte it has written: what WAIT counts, rather than the replica's
 * own `master_link_status`, which is up before the master has heard back.
 */
export async function replicaCaughtUp(port: number, boundMs = 20_000): Promise<void> {
  await waitFor(
    async () => {
      const info = await cli(port, 'INFO', 'replication').catch(() => '');
      const acked = /slave0:.*state=online,offset=(\d+)/.exec(info)?.[1];
      return acked !== undefined && Number(acked) >= Number(/master_repl_offset:(\d+)/.exec(info)?.[1]);
    },
    'the replica to acknowledge all the master wrote',
    boundMs,
  );
}

/** One command through redis-cli, whose reply text is complete (the raw helper reads one packet). */
export async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-p', String(port), ...args], { timeout: 5000 });
  return stdout.trim();
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch {
      // not up yet
    }
    await sleep(50);
  }
  throw new Error(what);
}
