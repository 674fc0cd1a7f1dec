import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Principal } from '../../src/auth/types.ts';
import { subjectHash } from '../../src/cache/keys.ts';
import { createRedisClient, parseRedisConfig } from '../../src/cache/redis.ts';
import type { RedisClient, RedisConfig } from '../../src/cache/redis.ts';
import { run } from '../../src/commands/grants.ts';
import { createRedisSource } from '../../src/grants/sources/redis.ts';
import type { RedisGrantSource } from '../../src/grants/sources/redis.ts';
import { decide } from '../../src/grants/snapshot.ts';
import { createRedisGrantStore } from '../../src/grants/redis-store.ts';
import type { GrantStore } from '../../src/grants/store.ts';
import { MAX_SNAPSHOT_ROWS } from '../../src/grants/types.ts';
import type { SnapshotResult } from '../../src/grants/types.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';

const STALENESS_MS = 5000;
const principal = (id: string, scopes: string[] = []): Principal => ({
  id,
  scopes: new Set(scopes),
  credentialStrength: 'static',
});

let redis: RedisServer;
let config: RedisConfig;
let admin: RedisClient;
const stores: GrantStore[] = [];

async function store(domain: string): Promise<GrantStore> {
  const r = await createRedisGrantStore({
    redis: config,
    domain,
    stalenessMs: STALENESS_MS,
    checkIntervalMs: 1000,
    l2TtlSeconds: 60,
  });
  assert.ok(r.ok);
  stores.push(r.store);
  return r.store;
}

function source(domain: string): RedisGrantSource {
  const s = createRedisSource(admin, domain);
  assert.ok(s);
  return s;
}

async function effect(s: GrantStore, p: Principal, tool: string): Promise<string> {
  const r = await s.snapshot(p);
  return r.ok ? decide(r.snapshot, tool).effect : r.code;
}

async function until(what: () => Promise<boolean>, boundMs: number): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < boundMs) {
    if (await what()) return performance.now() - t0;
    await sleep(2);
  }
  assert.fail(`not within ${boundMs} ms`);
}

before(async () => {
  redis = await startRedis();
  const c = parseRedisConfig({ url: redis.url, commandTimeoutMs: 500, connectTimeoutMs: 2000 });
  assert.ok(c.ok);
  config = c.config;
  admin = createRedisClient(config);
  await new Promise((res) => admin.once('ready', res));
});

after(async () => {
  await Promise.all(stores.map((s) => s.close()));
  admin?.disconnect();
  await redis?.close();
});

describe('grant rows in Redis', () => {
  it('set upserts by identity, delete removes, and each change spends exactly one revision', async () => {
    const src = source('rows');
    const row = { principal: '*', tool: 'search', effect: 'allow', scopes: ['b', 'a', 'a'] };
    assert.deepEqual(await src.set(row), { ok: true, revision: 1, changed: true });
    assert.deepEqual(await src.set(row), { ok: true, revision: 2, changed: true });
    const all = await src.readAll();
    assert.ok(all.ok);
    assert.deepEqual(all.rows, [{ principal: '*', tool: 'search', scopes: ['a', 'b'], effect: 'allow', revision: 2 }]);
    assert.deepEqual(await src.delete({ ...row, revision: 99 }), { ok: true, revision: 3, changed: true });
    assert.deepEqual(await src.delete(row), { ok: true, revision: 3, changed: false });
    assert.deepEqual(await src.set({ principal: 'bob', tool: 'x', effect: 'allow', scopes: ['s'] }), {
      ok: false,
      code: 'invalid_row',
    });
    assert.deepEqual(await src.readRevision(), { ok: true, revision: 3 });
  });

  it('keeps per-principal, wildcard and per-tool indexes equal to the rows', async () => {
    const src = source('idx');
    await src.set({ principal: 'alice', tool: 'echo', effect: 'allow' });
    await src.set({ principal: 'bob', tool: 'echo', effect: 'deny' });
    await src.set({ principal: '*', tool: 'search', effect: 'allow', scopes: ['read'] });
    const forAlice = await src.readForPrincipal('alice');
    assert.ok(forAlice.ok);
    assert.deepEqual(forAlice.rows.map((r) => `${r.principal}/${r.tool}`).sort(), ['*/search', 'alice/echo']);
    const forEcho = await src.readForTool('echo');
    assert.ok(forEcho.ok);
    assert.deepEqual(forEcho.rows.map((r) => r.principal).sort(), ['alice', 'bob']);
    await src.delete({ principal: 'bob', tool: 'echo', effect: 'deny' });
    const again = await src.readForTool('echo');
    assert.ok(again.ok);
    assert.deepEqual(
      again.rows.map((r) => r.principal),
      ['alice'],
    );
    assert.equal(await admin.exists(src.keys.principal('bob')), 0);
  });
});

describe('two replicas sharing one Redis', () => {
  it('a grant revoked with the CLI stops the decision on both, well within the staleness bound', async () => {
    const cli = ['--redis-url', redis.url, '--domain', 'shared'];
    const quiet = { env: {}, stdout: { write: () => true }, stderr: { write: () => true } };
    assert.equal(await run(['set', ...cli, '--principal', 'alice', '--tool', 'echo', '--effect', 'allow'], quiet), 0);
    const a = await store('shared');
    const b = await store('shared');
    const alice = principal('alice');
    assert.equal(await effect(a, alice, 'echo'), 'allow');
    assert.equal(await effect(b, alice, 'echo'), 'allow');
    assert.equal(b.stats().l2Hits, 1, "the second replica reads the first one's L2 entry");
    assert.ok(!(a.snapshot(alice) instanceof Promise), 'warm L1 answers synchronously');

    const t0 = performance.now();
    assert.equal(
      await run(['delete', ...cli, '--principal', 'alice', '--tool', 'echo', '--effect', 'allow'], quiet),
      0,
    );
    await until(
      async () => (await effect(a, alice, 'echo')) === 'deny' && (await effect(b, alice, 'echo')) === 'deny',
      STALENESS_MS,
    );
    const elapsed = performance.now() - t0;
    assert.ok(elapsed < STALENESS_MS / 5, `revocation took ${elapsed} ms`);
    assert.equal(a.revision(), 2);
    assert.equal(b.revision(), 2);
  });

  it('a revision bump invalidates L1: a cached allow is never served after a revoke', async () => {
    const src = source('l1');
    await src.set({ principal: 'carol', tool: 'echo', effect: 'allow' });
    const s = await store('l1');
    const carol = principal('carol');
    assert.equal(await effect(s, carol, 'echo'), 'allow');
    const cached = s.snapshot(carol);
    assert.ok(!(cached instanceof Promise) && cached.ok && decide(cached.snapshot, 'echo').effect === 'allow');
    const seen: number[] = [];
    s.onRevision((r) => seen.push(r));

    const revoked = await src.set({ principal: 'carol', tool: 'echo', effect: 'deny' });
    assert.ok(revoked.ok);
    await until(async () => s.revision() === revoked.revision, STALENESS_MS);
    const after = s.snapshot(carol);
    assert.ok(after instanceof Promise, 'the old L1 entry is not served');
    const r = await after;
    assert.ok(r.ok);
    assert.equal(r.snapshot.revision, revoked.revision);
    assert.equal(decide(r.snapshot, 'echo').reason, 'exact_deny');
    assert.deepEqual(seen, [revoked.revision]);
  });

  it('wildcard rows apply by scope, and rowsForTool sees every principal', async () => {
    const src = source('wild');
    await src.set({ principal: '*', tool: 'search', effect: 'allow', scopes: ['read'] });
    await src.set({ principal: 'dave', tool: 'search', effect: 'deny' });
    const s = await store('wild');
    assert.equal(await effect(s, principal('erin', ['read']), 'search'), 'allow');
    assert.equal(await effect(s, principal('erin'), 'search'), 'deny');
    assert.equal(await effect(s, principal('dave', ['read']), 'search'), 'deny');
    const rows = await s.rowsForTool('search');
    assert.deepEqual(rows?.map((r) => r.principal).sort(), ['*', 'dave']);
  });
});

describe('malformed or oversized grant data fails closed', () => {
  let src: RedisGrantSource;
  let s: GrantStore;
  const l2 = (p: Principal, revision: number) => src.keys.snapshot(revision, subjectHash(p.id, [...p.scopes].sort()));

  before(async () => {
    src = source('bad');
    await src.set({ principal: 'frank', tool: 'echo', effect: 'allow' });
    s = await store('bad');
  });

  const cases: [string, (p: Principal, rev: number) => string][] = [
    ['invalid JSON', () => '{"principal":'],
    ['wrong types', (p, rev) => JSON.stringify({ principal: p.id, scopes: 'read', revision: rev, rows: [] })],
    [
      'an unknown field',
      (p, rev) => JSON.stringify({ principal: p.id, scopes: [], revision: rev, rows: [], admin: true }),
    ],
    [
      'a row for someone else',
      (p, rev) =>
        JSON.stringify({
          principal: p.id,
          scopes: [],
          revision: rev,
          rows: [{ principal: 'mallory', tool: 'echo', scopes: [], effect: 'allow' }],
        }),
    ],
    [
      "another principal's snapshot",
      (_p, rev) => JSON.stringify({ principal: 'mallory', scopes: [], revision: rev, rows: [] }),
    ],
    ['another revision', (p, rev) => JSON.stringify({ principal: p.id, scopes: [], revision: rev - 1, rows: [] })],
    [
      'a digest that does not match',
      (p, rev) => JSON.stringify({ principal: p.id, scopes: [], revision: rev, rows: [], digest: 'x' }),
    ],
    [
      `more than ${MAX_SNAPSHOT_ROWS} rows`,
      (p, rev) =>
        JSON.stringify({
          principal: p.id,
          scopes: [],
          revision: rev,
          rows: Array.from({ length: MAX_SNAPSHOT_ROWS + 1 }, (_, i) => ({
            principal: p.id,
            tool: `t${i}`,
            scopes: [],
            effect: 'allow',
          })),
        }),
    ],
  ];
  for (const [name, value] of cases) {
    it(`an L2 snapshot with ${name}`, async () => {
      const p = principal(`frank-${name.replace(/\W+/g, '-')}`);
      const rev = s.revision();
      assert.ok(rev !== undefined);
      await admin.set(l2(p, rev), value(p, rev));
      const before = s.stats().malformedFailures;
      const r: SnapshotResult = await s.snapshot(p);
      assert.deepEqual(r, { ok: false, code: 'grants_unavailable' });
      assert.equal(s.stats().malformedFailures, before + 1);
      // The bad entry is removed, so the next request recomputes it from the rows.
      const again = await s.snapshot(p);
      assert.ok(again.ok);
    });
  }

  it(`more than ${MAX_SNAPSHOT_ROWS} applicable rows in the indexes`, async () => {
    const p = principal('grace');
    const fields: string[] = [];
    for (let i = 0; i <= MAX_SNAPSHOT_ROWS; i++)
      fields.push(
        `id${i}`,
        JSON.stringify({ principal: 'grace', tool: `t${i}`, scopes: [], effect: 'allow', revision: 1 }),
      );
    await admin.hset(src.keys.principal('grace'), ...fields);
    assert.deepEqual(await s.snapshot(p), { ok: false, code: 'grants_unavailable' });
  });

  it('a malformed row in an index', async () => {
    await admin.hset(src.keys.principal('heidi'), 'x', '{"principal":"heidi","tool":"echo","effect":"maybe"}');
    assert.deepEqual(await s.snapshot(principal('heidi')), { ok: false, code: 'grants_unavailable' });
  });

  it('a revision that is not a whole number', async () => {
    const src2 = source('badrev');
    await admin.set(src2.keys.revision, 'NaN');
    assert.deepEqual(await src2.readRevision(), { ok: false, code: 'grants_unavailable' });
    const r = await createRedisGrantStore({ redis: { ...config, connectTimeoutMs: 300 }, domain: 'badrev' });
    assert.ok(r.ok);
    stores.push(r.store);
    assert.equal(r.store.revision(), undefined);
    assert.deepEqual(await r.store.snapshot(principal('ivan')), { ok: false, code: 'grants_unavailable' });
  });
});
