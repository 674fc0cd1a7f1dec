import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Principal } from '../../src/auth/types.ts';
import { createRedisClient, parseRedisConfig } from '../../src/cache/redis.ts';
import type { RedisClient, RedisConfig } from '../../src/cache/redis.ts';
import { createRedisSource } from '../../src/grants/sources/redis.ts';
import type { RedisGrantSource } from '../../src/grants/sources/redis.ts';
import { decide } from '../../src/grants/snapshot.ts';
import { createRedisGrantStore } from '../../src/grants/redis-store.ts';
import type { GrantStore } from '../../src/grants/store.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';

/**
 * Redis killed, restarted, and paused under a steady stream of snapshot
 * requests: every request answers within the command timeout (no hang, no
 * throw), refuses once the revision cannot be confirmed, and the same store
 * recovers on its own.
 */
const COMMAND_TIMEOUT_MS = 300;
const STALENESS_MS = 1000;
const CHECK_INTERVAL_MS = 200;
/** Scheduling slack on a shared 2-core machine. */
const SLACK_MS = 300;
const DOMAIN = 'outage';
const ROW = { principal: 'alice', tool: 'echo', effect: 'allow' };

let redis: RedisServer;
let config: RedisConfig;
let admin: RedisClient;
let src: RedisGrantSource;
let store: GrantStore;
const hot: Principal = { id: 'alice', scopes: new Set(), credentialStrength: 'static' };

interface Sample {
  readonly at: number;
  readonly ms: number;
  readonly ok: boolean;
}

/**
 * Two request streams: the warm principal every 10 ms (an L1 hit while the
 * revision is trusted) and a new principal every 20 ms (an L1 miss, which
 * goes to Redis).
 */
function load() {
  const hotSamples: Sample[] = [];
  const coldSamples: Sample[] = [];
  let running = true;
  let thrown: unknown;
  const loop = async (samples: Sample[], who: (i: number) => Principal, pauseMs: number, allowed: boolean) => {
    // oxlint-disable-next-line no-unmodified-loop-condition -- stop() clears `running` while the loop awaits
    for (let i = 0; running; i++) {
      const at = performance.now();
      try {
        const r = await store.snapshot(who(i));
        samples.push({
          at,
          ms: performance.now() - at,
          ok: r.ok && (!allowed || decide(r.snapshot, 'echo').effect === 'allow'),
        });
      } catch (err) {
        thrown = err;
        return;
      }
      await sleep(pauseMs);
    }
  };
  const done = Promise.all([
    loop(hotSamples, () => hot, 10, true),
    loop(
      coldSamples,
      (i) => ({ id: `cold-${i}-${Math.random()}`, scopes: new Set(), credentialStrength: 'static' }),
      20,
      false,
    ),
  ]);
  return {
    hotSamples,
    coldSamples,
    async stop() {
      running = false;
      await done;
      assert.equal(thrown, undefined, 'snapshot() never throws');
    },
  };
}

async function seed(): Promise<void> {
  const deadline = performance.now() + 5000;
  while (performance.now() < deadline) {
    if ((await src.set(ROW)).ok) return;
    await sleep(20);
  }
  assert.fail('could not seed the grant');
}

async function recovered(boundMs: number): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < boundMs) {
    const h = await store.snapshot(hot);
    const c = await store.snapshot({ id: `probe-${Math.random()}`, scopes: new Set(), credentialStrength: 'static' });
    if (h.ok && c.ok && decide(h.snapshot, 'echo').effect === 'allow') return performance.now() - t0;
    await sleep(10);
  }
  return assert.fail(`not recovered within ${boundMs} ms`);
}

before(async () => {
  redis = await startRedis();
  const c = parseRedisConfig({ url: redis.url, commandTimeoutMs: COMMAND_TIMEOUT_MS, connectTimeoutMs: 500 });
  assert.ok(c.ok);
  config = c.config;
  admin = createRedisClient(config);
  await new Promise((res) => admin.once('ready', res));
  src = createRedisSource(admin, DOMAIN) as RedisGrantSource;
  await seed();
  const r = await createRedisGrantStore({
    redis: config,
    domain: DOMAIN,
    stalenessMs: STALENESS_MS,
    checkIntervalMs: CHECK_INTERVAL_MS,
  });
  assert.ok(r.ok);
  store = r.store;
});

after(async () => {
  await store?.close();
  admin?.disconnect();
  await redis?.close();
});

function outageFigures(l: ReturnType<typeof load>, from: number, to: number) {
  const within = (xs: readonly Sample[]) => xs.filter((s) => s.at >= from && s.at < to);
  const hotIn = within(l.hotSamples);
  const cold = within(l.coldSamples);
  const firstHotFailure = hotIn.find((s) => !s.ok);
  return {
    requests: hotIn.length + cold.length,
    errors: [...hotIn, ...cold].filter((s) => !s.ok).length,
    hotFailsAfterMs: firstHotFailure === undefined ? undefined : firstHotFailure.at - from,
    coldOkAfterTimeout: cold.filter((s) => s.at > from + COMMAND_TIMEOUT_MS + SLACK_MS && s.ok).length,
    slowestMs: Math.max(...hotIn.map((s) => s.ms), ...cold.map((s) => s.ms)),
  };
}

describe('Redis outages fail closed and recover without a restart', () => {
  it('Redis killed, then restarted on the same port', async (t) => {
    await recovered(2000);
    const l = load();
    await sleep(200);
    const killedAt = performance.now();
    await redis.kill();
    await sleep(STALENESS_MS + 600);
    const restartAt = performance.now();
    await redis.restart();
    await seed();
    await recovered(5000);
    const recoveredAt = performance.now();
    await l.stop();

    const f = outageFigures(l, killedAt, restartAt);
    t.diagnostic(
      `kill: ${f.errors}/${f.requests} requests refused while down; warm principal refused after ${Math.round(f.hotFailsAfterMs ?? -1)} ms; slowest answer ${Math.round(f.slowestMs)} ms; recovered ${Math.round(recoveredAt - restartAt)} ms after restart`,
    );
    assert.ok(f.slowestMs <= COMMAND_TIMEOUT_MS + SLACK_MS, `an answer took ${f.slowestMs} ms`);
    assert.equal(f.coldOkAfterTimeout, 0, 'nothing is computed while Redis is down');
    assert.ok(
      f.hotFailsAfterMs !== undefined && f.hotFailsAfterMs <= STALENESS_MS + CHECK_INTERVAL_MS + SLACK_MS,
      'L1 is refused once the revision is stale',
    );
    assert.ok(f.errors > 0);
  });

  it('Redis paused with CLIENT PAUSE ALL (commands hang)', async (t) => {
    await recovered(3000);
    const pauseMs = 2000;
    const l = load();
    await sleep(200);
    const pausedAt = performance.now();
    assert.match(await redis.command('CLIENT', 'PAUSE', String(pauseMs), 'ALL'), /^\+OK/);
    await sleep(pauseMs);
    const resumedAt = performance.now();
    await recovered(5000);
    const recoveredAt = performance.now();
    await l.stop();

    const f = outageFigures(l, pausedAt, resumedAt);
    t.diagnostic(
      `pause: ${f.errors}/${f.requests} requests refused while paused; warm principal refused after ${Math.round(f.hotFailsAfterMs ?? -1)} ms; slowest answer ${Math.round(f.slowestMs)} ms; recovered ${Math.round(recoveredAt - resumedAt)} ms after the pause ended`,
    );
    assert.ok(f.slowestMs <= COMMAND_TIMEOUT_MS + SLACK_MS, `an answer took ${f.slowestMs} ms`);
    assert.equal(f.coldOkAfterTimeout, 0, 'nothing is computed while Redis hangs');
    assert.ok(
      f.hotFailsAfterMs !== undefined && f.hotFailsAfterMs <= STALENESS_MS + CHECK_INTERVAL_MS + SLACK_MS,
      'L1 is refused once the revision is stale',
    );
  });
});
