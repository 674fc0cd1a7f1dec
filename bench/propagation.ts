/**
 * `npm run bench:propagation`: how long a grant change takes to reach every
 * replica. A real redis-server, two grant stores on their own connections (as
 * two toolgate replicas would be), and 100 changes made with the function the
 * `toolgate grants` CLI uses, alternating grant and revoke. Each is timed from
 * just before the change until BOTH stores trust the new revision and serve
 * the new decision. The last line is JSON.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Principal } from '../src/auth/types.ts';
import { createRedisClient, parseRedisConfig } from '../src/cache/redis.ts';
import { createRedisSource } from '../src/grants/sources/redis.ts';
import { decide } from '../src/grants/snapshot.ts';
import { createRedisGrantStore } from '../src/grants/redis-store.ts';
import type { GrantStore } from '../src/grants/store.ts';
import { startRedis } from '../test/helpers/redis.ts';

const CHANGES = 100;
const DOMAIN = 'bench';
const TOOL = 'echo';
const BOUND_MS = 10_000;
const alice: Principal = { id: 'alice', scopes: new Set(), credentialStrength: 'static' };

async function serves(store: GrantStore, revision: number, effect: 'allow' | 'deny'): Promise<boolean> {
  if (store.revision() !== revision) return false;
  const r = await store.snapshot(alice);
  return r.ok && r.snapshot.revision === revision && decide(r.snapshot, TOOL).effect === effect;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

const redis = await startRedis();
const stores: GrantStore[] = [];
const admin = (() => {
  const c = parseRedisConfig({ url: redis.url });
  if (!c.ok) throw new Error(`${c.setting}: ${c.problem}`);
  return { config: c.config, client: createRedisClient(c.config, { name: 'bench-admin' }) };
})();
try {
  await new Promise((res) => admin.client.once('ready', res));
  const source = createRedisSource(admin.client, DOMAIN);
  if (source === undefined) throw new Error('invalid domain');
  for (const name of ['replica-a', 'replica-b']) {
    const r = await createRedisGrantStore({ redis: admin.config, domain: DOMAIN, clientName: name });
    if (!r.ok) throw new Error(r.problem);
    stores.push(r.store);
  }
  const row = { principal: alice.id, tool: TOOL, effect: 'allow' };
  const times: number[] = [];
  for (let i = 0; i < CHANGES; i++) {
    const granting = i % 2 === 0;
    const t0 = performance.now();
    const change = granting ? await source.set(row) : await source.delete(row);
    if (!change.ok || !change.changed) throw new Error(`change ${i} failed: ${change.ok ? 'no change' : change.code}`);
    const expected = granting ? 'allow' : 'deny';
    for (;;) {
      const seen = await Promise.all(stores.map((s) => serves(s, change.revision, expected)));
      if (seen.every(Boolean)) break;
      if (performance.now() - t0 > BOUND_MS) throw new Error(`change ${i} not seen within ${BOUND_MS} ms`);
      await sleep(0);
    }
    times.push(performance.now() - t0);
    // Let the replicas reach a steady state, as between real changes.
    await sleep(5);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const ms = (n: number) => Math.round(n * 100) / 100;
  const stats = stores.map((s) => s.stats());
  process.stdout.write(
    `propagation over ${CHANGES} changes to 2 replicas: p50 ${ms(percentile(sorted, 50))} ms, p90 ${ms(percentile(sorted, 90))} ms, ` +
      `p99 ${ms(percentile(sorted, 99))} ms, max ${ms(sorted[sorted.length - 1] as number)} ms\n`,
  );
  process.stdout.write(`replica stats: ${JSON.stringify(stats)}\n`);
  process.stdout.write(
    `${JSON.stringify({ changes: CHANGES, p50_ms: ms(percentile(sorted, 50)), p99_ms: ms(percentile(sorted, 99)) })}\n`,
  );
} finally {
  await Promise.all(stores.map((s) => s.close()));
  admin.client.disconnect();
  await redis.close();
}
