/**
 * The faults of issue 16, each injected under load into real Redis
 * deployments in front of real toolgate processes, each bounded in time.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { run as grantsCli } from '../src/commands/grants.ts';
import { startFaultUpstream, type FaultUpstream } from '../test/helpers/fault-upstream.ts';
import { startRedis } from '../test/helpers/redis.ts';
import { startCluster, startSentinelSet } from '../test/helpers/redis-topologies.ts';
import { sha256 } from '../test/helpers/static-keys.ts';
import { startGate, type GateProcess } from './gate.ts';
import { PRINCIPAL, send, startLoad, startReplayer, STATIC_KEY, type Sample } from './load.ts';
import { AUDIENCE, createIssuer, ISSUER, ONE_TIME_CLAIM, type Issuer } from './tokens.ts';

export const STALENESS_MS = 1000;
export const COMMAND_TIMEOUT_MS = 500;
export const UPSTREAM_TIMEOUT_MS = 1000;
const DOMAIN = 'chaos';
const BASELINE_MS = 2000;

export interface Outcome {
  readonly samples: Sample[];
  readonly replays: number;
  readonly crashed: boolean;
  readonly problems: readonly string[];
}

export interface Fixture {
  readonly dir: string;
  readonly upstream: FaultUpstream;
  readonly issuer: Issuer;
  close(): Promise<void>;
}

/** Policy, keys, JWKS and the counting upstream shared by every scenario. */
export async function createFixture(): Promise<Fixture> {
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-chaos-'));
  const issuer = await createIssuer(join(dir, 'jwks.json'));
  await writeFile(
    join(dir, 'keys.yaml'),
    `keys:\n  - { sha256: ${sha256(STATIC_KEY)}, principal: ${PRINCIPAL}, scopes: [] }\n`,
  );
  await writeFile(
    join(dir, 'policy.yaml'),
    [
      'version: 1',
      'authentication:',
      '  staticKeys: { file: keys.yaml }',
      '  jwt:',
      `    issuer: ${ISSUER}`,
      `    audience: ${AUDIENCE}`,
      '    jwksFile: jwks.json',
      '    algorithms: [ES256]',
      `    oneTime: { claim: ${ONE_TIME_CLAIM} }`,
      '',
    ].join('\n'),
  );
  const upstream = await startFaultUpstream();
  return {
    dir,
    upstream,
    issuer,
    async close() {
      await upstream.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function gateEnv(f: Fixture, redisUrl: string): Record<string, string> {
  return {
    TOOLGATE_UPSTREAM: f.upstream.origin,
    TOOLGATE_POLICY_FILE: join(f.dir, 'policy.yaml'),
    TOOLGATE_REDIS_URL: redisUrl,
    TOOLGATE_GRANT_SOURCE: 'redis',
    TOOLGATE_POLICY_DOMAIN: DOMAIN,
    TOOLGATE_GRANTS_STALENESS_MS: String(STALENESS_MS),
    TOOLGATE_GRANTS_CHECK_INTERVAL_MS: '200',
    TOOLGATE_REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
    TOOLGATE_UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
    TOOLGATE_DEFERRED_TOOLS: 'true',
    TOOLGATE_LOG_LEVEL: 'info',
  };
}

async function grants(url: string, ...argv: string[]): Promise<void> {
  let err = '';
  const io = { env: {}, stdout: { write: () => true }, stderr: { write: (s: string) => ((err += s), true) } };
  if ((await grantsCli([argv[0] as string, '--redis-url', url, '--domain', DOMAIN, ...argv.slice(1)], io)) !== 0)
    throw new Error(`grants ${argv[0]} failed: ${err.trim()}`);
}

const allow = (url: string, tool: string) =>
  grants(url, 'set', '--principal', '*', '--tool', tool, '--effect', 'allow');

/** Grants `echo` to everyone in a fresh deployment, runs `body` against a toolgate process in front of it, then tears both down. */
async function inDeployment<R>(
  f: Fixture,
  deployment: { close(): Promise<void> },
  url: string,
  body: (gate: GateProcess) => Promise<R>,
): Promise<R> {
  try {
    await allow(url, 'echo');
    const gate = await startGate(gateEnv(f, url));
    try {
      return await body(gate);
    } finally {
      await gate.stop();
    }
  } finally {
    await deployment.close();
  }
}

/** Runs load and the replayer around `fault`, which returns the moment that matters (deny written, data lost, node killed). */
async function underLoad(
  f: Fixture,
  gate: GateProcess,
  fault: () => Promise<number>,
  afterMs: number,
): Promise<Outcome & { at: number }> {
  const load = startLoad(gate.url, f.issuer);
  const replayer = startReplayer(gate.url, f.issuer);
  await sleep(BASELINE_MS);
  const at = await fault();
  await sleep(afterMs);
  const [samples, replays] = await Promise.all([load.stop(), replayer.stop()]);
  return { samples, replays, crashed: gate.crashed(), problems: gate.problems, at };
}

export interface FailoverResult extends Outcome {
  /** How long after the deny calls were still allowed (0: none). */
  readonly staleAllowMs: number;
  /** Calls allowed that started more than the staleness bound after the deny. */
  readonly allowedAfterDeny: number;
}

/** A deny written to the new master right after a graceful (`SENTINEL failover`) or hard (master killed) failover. */
export async function sentinelFailover(f: Fixture, hard: boolean): Promise<FailoverResult> {
  const set = await startSentinelSet();
  return inDeployment(f, set, set.url, async (gate) => {
    const r = await underLoad(
      f,
      gate,
      async () => {
        if (hard) {
          const old = await set.masterPort();
          await set.master.kill();
          await set.switched(old, 30_000);
        } else {
          await set.failover();
        }
        await grants(set.url, 'set', '--principal', PRINCIPAL, '--tool', 'echo', '--effect', 'deny');
        return Date.now();
      },
      STALENESS_MS + 2000,
    );
    const allowedLate = r.samples.filter(
      (s) => (s.kind === 'call' || s.kind === 'once') && s.status === 200 && s.start >= r.at,
    );
    return {
      ...r,
      staleAllowMs: Math.max(0, ...allowedLate.map((s) => s.start - r.at)),
      allowedAfterDeny: allowedLate.filter((s) => s.start > r.at + STALENESS_MS).length,
    };
  });
}

export interface DataLossResult extends Outcome {
  /** Calls answered 403 tool_not_granted after Redis came back empty. */
  readonly notGranted: number;
  /** Calls answered 503 grants_unavailable meanwhile (the intended answer). */
  readonly unavailable: number;
  /** Whether `grants revision --reset` plus rewritten grants brought calls back. */
  readonly recovered: boolean;
  /** How long a call to a tool that never answers took to get its 504 (0: it got something else). */
  readonly upstreamTimeoutMs: number;
}

/** Standalone Redis killed and restarted without its data, under load. */
export async function dataLoss(f: Fixture): Promise<DataLossResult> {
  const redis = await startRedis();
  return inDeployment(f, redis, redis.url, async (gate) => {
    await allow(redis.url, 'stall_head');
    const r = await underLoad(
      f,
      gate,
      async () => {
        const at = Date.now();
        await redis.restart();
        return at;
      },
      4000,
    );
    const after = r.samples.filter((s) => s.start >= r.at);
    const pool = new Pool(new URL(gate.url).origin, { connections: 1 });
    const path = new URL(gate.url).pathname;
    const call = (name: string) =>
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } });
    await allow(redis.url, 'echo');
    await allow(redis.url, 'stall_head');
    await grants(redis.url, 'revision', '--reset');
    let recovered = false;
    for (let i = 0; i < 50 && !recovered; i++) {
      recovered = (await send(pool, path, `Bearer ${STATIC_KEY}`, call('echo'), 'call')).status === 200;
      if (!recovered) await sleep(100);
    }
    const stalled = await send(pool, path, `Bearer ${STATIC_KEY}`, call('stall_head'), 'call');
    await pool.close();
    return {
      ...r,
      notGranted: after.filter((s) => s.status === 403 && s.code === 'tool_not_granted').length,
      unavailable: after.filter((s) => s.status === 503 && s.code === 'grants_unavailable').length,
      recovered,
      upstreamTimeoutMs: stalled.status === 504 ? stalled.end - stalled.start : 0,
    };
  });
}

export interface ClusterResult extends Outcome {
  /** Longest any request took once the slot owner was gone. */
  readonly blockMs: number;
  /** Longest stretch in which no request completed, once the slot owner was gone. */
  readonly maxGapMs: number;
  /** Longest request of each kind once the slot owner was gone. */
  readonly slowestByKind: Record<string, number>;
  /** toolgate's own view: requests it took longer than 1 s to answer (its duration histogram). */
  readonly gateRequestsOver1s: number;
  /** The longest request before the fault, under the same load: what the machine alone costs. */
  readonly baselineMaxMs: number;
  /** toolgate's longest event-loop delay (prom-client), to tell CPU starvation from waiting on Redis. */
  readonly gateEventLoopLagMaxMs: number;
}

/** 3 masters + 3 replicas; the master of the domain's slot and its replica are killed: the slot is down. */
export async function clusterSlotDown(f: Fixture): Promise<ClusterResult> {
  const cluster = await startCluster(3, 1);
  return inDeployment(f, cluster, cluster.url, async (gate) => {
    const r = await underLoad(
      f,
      gate,
      async () => {
        const owner = await cluster.ownerOf(`{tg:${DOMAIN}}:rev`);
        const replicas = await cluster.replicasOf(owner);
        const at = Date.now();
        await Promise.all([owner, ...replicas].map((n) => n.kill()));
        return at;
      },
      4000,
    );
    const metrics = await (await fetch(`${gate.adminUrl}/metrics`)).text();
    const after = r.samples.filter((s) => s.start >= r.at && !s.hung);
    const ends = r.samples
      .filter((s) => s.end >= r.at)
      .map((s) => s.end)
      .sort((a, b) => a - b);
    let gap = 0;
    let previous = r.at;
    for (const end of ends) {
      gap = Math.max(gap, end - previous);
      previous = end;
    }
    const slowestByKind: Record<string, number> = {};
    for (const s of after) slowestByKind[s.kind] = Math.max(slowestByKind[s.kind] ?? 0, s.end - s.start);
    return {
      ...r,
      blockMs: Math.max(0, ...after.map((s) => s.end - s.start)),
      maxGapMs: gap,
      slowestByKind,
      gateRequestsOver1s: slowerThan(metrics, '1'),
      baselineMaxMs: Math.max(0, ...r.samples.filter((x) => x.end < r.at).map((x) => x.end - x.start)),
      gateEventLoopLagMaxMs: Math.round(
        1000 * Number(/^toolgate_process_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(metrics)?.[1] ?? 'NaN'),
      ),
    };
  });
}

/** Requests toolgate itself measured as longer than `le` seconds (a bucket bound of its duration histogram), over all methods. */
function slowerThan(metrics: string, le: string): number {
  let total = 0;
  let within = 0;
  for (const m of metrics.matchAll(/^toolgate_request_duration_seconds_bucket\{.*le="([^"]+)"\} (\d+)$/gm)) {
    if (m[1] === '+Inf') total += Number(m[2]);
    if (m[1] === le) within += Number(m[2]);
  }
  return total - within;
}
