/**
 * `npm run bench:fanout`: what one revision bump costs when many sidecars
 * listen. A real redis-server on loopback and FANOUT_SIDECARS (default 50)
 * simulated sidecars, each exactly as policy mode opens it: its own pair of
 * connections (a command connection and one subscriber) and a grant store
 * over them. FANOUT_BUMPS (default 100) bumps are made with the function
 * `toolgate grants revision --bump` runs, one at a time, each timed from just
 * before the bump until every store has seen the new revision, and Redis's
 * CPU (INFO cpu, used_cpu_sys + used_cpu_user) is read around each.
 *
 * The periodic revision read is set to an hour so that only the bump and its
 * fan-out happen inside the measured windows; a control window of the same
 * INFO pair without a bump is measured too. Every sidecar lives in this one
 * process, so the time until the last one has seen a bump includes handling
 * all the messages one after the other on one event loop: on real pods they
 * are handled in parallel. The last line is JSON.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { openRedisConnections, type RedisConnections } from '../src/cache/connections.ts';
import { createRedisClient, parseRedisConfig } from '../src/cache/redis.ts';
import { createRedisGrantStore } from '../src/grants/redis-store.ts';
import { createRedisSource } from '../src/grants/sources/redis.ts';
import type { GrantStore } from '../src/grants/store.ts';
import { setLogLevel } from '../src/telemetry/log.ts';
import { startRedis } from '../test/helpers/redis.ts';

const SIDECARS = Number(process.env.FANOUT_SIDECARS ?? 50);
const BUMPS = Number(process.env.FANOUT_BUMPS ?? 100);
const DOMAIN = 'fanout';
const HOUR_MS = 3_600_000;
const BOUND_MS = 10_000;
/** Pause between bumps, as between real changes. */
const GAP_MS = 20;

if (!Number.isSafeInteger(SIDECARS) || SIDECARS < 1 || !Number.isSafeInteger(BUMPS) || BUMPS < 1)
  throw new Error('FANOUT_SIDECARS and FANOUT_BUMPS must be whole numbers ≥ 1');

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

// The stores' per-transition log lines (50 "confirmed" at start) would bury the figures.
setLogLevel('error');
const redis = await startRedis();
const pairs: RedisConnections[] = [];
const stores: GrantStore[] = [];
const parsed = parseRedisConfig({ url: redis.url });
if (!parsed.ok) throw new Error(`${parsed.setting}: ${parsed.problem}`);
const admin = createRedisClient(parsed.config, { name: 'bench-admin' });
try {
  await new Promise((res) => admin.once('ready', res));
  const source = createRedisSource(admin, DOMAIN);
  if (source === undefined) throw new Error('invalid domain');
  if (!(await source.bump()).ok) throw new Error('first bump failed');

  /** Per store, the highest revision it has seen and when. */
  const seen = Array.from({ length: SIDECARS }, () => ({ revision: 0, at: 0 }));
  for (let i = 0; i < SIDECARS; i++) {
    const connections = openRedisConnections(parsed.config, `sidecar-${i}`);
    pairs.push(connections);
    // As in policy mode, where the pair is open before the grant store is.
    await new Promise((res) => connections.client.once('ready', res));
    const r = await createRedisGrantStore({
      connections,
      domain: DOMAIN,
      stalenessMs: HOUR_MS,
      checkIntervalMs: HOUR_MS,
    });
    if (!r.ok) throw new Error(r.problem);
    stores.push(r.store);
    const mine = seen[i] as { revision: number; at: number };
    r.store.onRevision((revision) => {
      if (revision > mine.revision) Object.assign(mine, { revision, at: performance.now() });
    });
  }
  const channel = `{tg:${DOMAIN}}:rev:changed`;
  for (const deadline = Date.now() + BOUND_MS; ;) {
    const [, count] = (await admin.call('PUBSUB', 'NUMSUB', channel)) as [string, number];
    const confirmed = stores.every((s) => s.revision() !== undefined);
    if (count === SIDECARS && confirmed) break;
    if (Date.now() > deadline) throw new Error(`only ${count} of ${SIDECARS} subscribed`);
    await sleep(20);
  }
  const clients =
    String(await admin.call('CLIENT', 'LIST'))
      .trim()
      .split('\n').length - 1;

  const cpu = async () => {
    const info = await admin.info('cpu');
    const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1]);
    return (field('used_cpu_sys') + field('used_cpu_user')) * 1e6;
  };

  const times: number[] = [];
  const cpuPerBump: number[] = [];
  const cpuControl: number[] = [];
  for (let i = 0; i < BUMPS; i++) {
    // The control: the same two INFO reads around a window of the same kind, without a bump.
    const c0 = await cpu();
    await sleep(0);
    cpuControl.push((await cpu()) - c0);
    await sleep(GAP_MS);

    const before = await cpu();
    const t0 = performance.now();
    const bumped = await source.bump();
    if (!bumped.ok) throw new Error(`bump ${i} failed`);
    while (!seen.every((s) => s.revision >= bumped.revision)) {
      if (performance.now() - t0 > BOUND_MS)
        throw new Error(`bump ${i} not seen by every sidecar within ${BOUND_MS} ms`);
      await sleep(0);
    }
    times.push(Math.max(...seen.map((s) => s.at)) - t0);
    cpuPerBump.push((await cpu()) - before);
    await sleep(GAP_MS);
  }

  const sorted = [...times].sort((a, b) => a - b);
  const median = (xs: readonly number[]) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  const ms = (n: number) => Math.round(n * 100) / 100;
  const us = (n: number) => Math.round(n);
  const figures = {
    sidecars: SIDECARS,
    bumps: BUMPS,
    redis_clients: clients,
    all_seen_p50_ms: ms(percentile(sorted, 50)),
    all_seen_p99_ms: ms(percentile(sorted, 99)),
    all_seen_max_ms: ms(sorted[sorted.length - 1] as number),
    redis_cpu_us_per_bump_p50: us(median(cpuPerBump)),
    redis_cpu_us_control_p50: us(median(cpuControl)),
    redis_cpu_us_per_bump_net: us(median(cpuPerBump) - median(cpuControl)),
  };
  process.stdout.write(
    `${SIDECARS} sidecars (${clients} Redis connections), ${BUMPS} bumps: until every sidecar saw the bump ` +
      `p50 ${figures.all_seen_p50_ms} ms, p99 ${figures.all_seen_p99_ms} ms, max ${figures.all_seen_max_ms} ms\n`,
  );
  process.stdout.write(
    `Redis CPU per bump (median): ${figures.redis_cpu_us_per_bump_p50} µs; the same INFO pair without a bump: ` +
      `${figures.redis_cpu_us_control_p50} µs; net ${figures.redis_cpu_us_per_bump_net} µs\n`,
  );
  process.stdout.write(`${JSON.stringify(figures)}\n`);
} finally {
  await Promise.all(stores.map((s) => s.close()));
  for (const pair of pairs) pair.close();
  admin.disconnect();
  await redis.close();
}
