import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Principal } from '../../../src/auth/types.ts';
import { Lru } from '../../../src/bounded/lru.ts';
import { decide } from '../../../src/grants/snapshot.ts';
import { createFileGrantStore } from '../../../src/grants/file-store.ts';
import type { GrantRow } from '../../../src/config/policy/grant-row.ts';

const alice: Principal = { id: 'alice', scopes: new Set(['read']), credentialStrength: 'static' };
const allow: GrantRow = { principal: 'alice', tool: 'echo', scopes: [], effect: 'allow' };
const wildcard: GrantRow = { principal: '*', tool: 'search', scopes: ['read'], effect: 'allow' };

describe('createFileGrantStore (embedded default)', () => {
  it('serves snapshots synchronously at a stable revision, from L1 on repeat', () => {
    const s = createFileGrantStore({ rows: [allow, wildcard], revision: 41 });
    const first = s.snapshot(alice);
    assert.ok(first.ok);
    assert.equal(first.snapshot.revision, 41);
    assert.equal(decide(first.snapshot, 'echo').effect, 'allow');
    assert.equal(decide(first.snapshot, 'search').effect, 'allow');
    assert.equal(s.snapshot(alice), first);
    assert.equal(s.stats().l1Hits, 1);
    assert.equal(s.revision(), 41);
  });

  it('picks a random revision when none is given', () => {
    const r = createFileGrantStore({ rows: [] }).revision();
    assert.ok(Number.isSafeInteger(r) && (r as number) >= 1);
  });

  it('replaceRows bumps the revision, tells listeners and never serves the old snapshot', async () => {
    const s = createFileGrantStore({ rows: [allow], revision: 1 });
    const seen: number[] = [];
    s.onRevision((r) => seen.push(r));
    assert.ok(s.snapshot(alice).ok);
    assert.equal(s.replaceRows([]), 2);
    const after = s.snapshot(alice);
    assert.ok(after.ok);
    assert.equal(after.snapshot.revision, 2);
    assert.equal(decide(after.snapshot, 'echo').effect, 'deny');
    assert.deepEqual(seen, [2]);
    assert.deepEqual(await s.rowsForTool('echo'), []);
  });

  it('refuses malformed rows and keeps the rows in force; starts closed when the first rows are malformed', () => {
    const s = createFileGrantStore({ rows: [allow], revision: 1 });
    assert.equal(s.replaceRows([{ principal: 'bob', tool: 'x', scopes: ['s'], effect: 'allow' }]), undefined);
    assert.equal(s.revision(), 1);
    const broken = createFileGrantStore({
      rows: [{ principal: '', tool: 'x', scopes: [], effect: 'allow' }],
      revision: 1,
    });
    assert.equal(broken.revision(), undefined);
    assert.deepEqual(broken.snapshot(alice), { ok: false, code: 'grants_unavailable' });
    assert.equal(broken.replaceRows([allow]), 1);
    assert.ok(broken.snapshot(alice).ok);
  });

  it('keys L1 by scope set: the same id with other scopes gets its own snapshot', () => {
    const s = createFileGrantStore({ rows: [wildcard], revision: 1 });
    const noScopes: Principal = { id: 'alice', scopes: new Set(), credentialStrength: 'static' };
    const a = s.snapshot(alice);
    const b = s.snapshot(noScopes);
    assert.ok(a.ok && b.ok);
    assert.equal(decide(a.snapshot, 'search').effect, 'allow');
    assert.equal(decide(b.snapshot, 'search').effect, 'deny');
  });
});

describe('Lru', () => {
  it('evicts the least recently used entry', () => {
    const l = new Lru<string, number>(2);
    l.set('a', 1);
    l.set('b', 2);
    assert.equal(l.get('a'), 1);
    l.set('c', 3);
    assert.equal(l.get('b'), undefined);
    assert.equal(l.get('a'), 1);
    assert.equal(l.size, 2);
  });
});
