import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backoffDelay } from '../../../src/catalogue/backoff.ts';
import { buildCatalogue } from '../../../src/catalogue/catalogue.ts';
import { catalogueDigest, toolDigest } from '../../../src/catalogue/digest.ts';

function digestOf(t: Record<string, unknown>): string {
  const d = toolDigest(t);
  assert.ok(d.ok);
  return d.digest;
}

describe('buildCatalogue', () => {
  it('keeps tools exactly as listed, in listing order, with their digests', () => {
    const a = { name: 'a', description: 'A', inputSchema: { type: 'object' }, icons: [{ src: 'i' }] };
    const b = { name: 'b', inputSchema: { type: 'object' } };
    const { catalogue, stats } = buildCatalogue([b, a], 1234);
    assert.deepEqual([...catalogue.tools.keys()], ['b', 'a']);
    assert.equal(catalogue.tools.get('a')?.tool, a);
    assert.equal(catalogue.tools.get('a')?.digest, digestOf(a));
    assert.equal(catalogue.digest, catalogueDigest([digestOf(a), digestOf(b)]));
    assert.equal(catalogue.syncedAt, 1234);
    assert.deepEqual(stats, { listed: 2, kept: 2, malformed: 0, duplicates: 0, undigestable: 0 });
  });

  it('keeps the first of duplicate names and counts the rest', () => {
    const first = { name: 'x', description: 'first' };
    const { catalogue, stats } = buildCatalogue([first, { name: 'x', description: 'second' }, { name: 'x' }], 0);
    assert.equal(catalogue.tools.size, 1);
    assert.equal(catalogue.tools.get('x')?.tool, first);
    assert.equal(stats.duplicates, 2);
  });

  it('skips and counts entries without a string name, or with an undigestable contract', () => {
    const entries = [
      null,
      7,
      'tool',
      [],
      {},
      { name: 3 },
      { name: 'ok' },
      { name: 'inf', inputSchema: { maximum: Infinity } },
    ];
    const { catalogue, stats } = buildCatalogue(entries, 0);
    assert.deepEqual([...catalogue.tools.keys()], ['ok']);
    assert.deepEqual(stats, { listed: 8, kept: 1, malformed: 6, duplicates: 0, undigestable: 1 });
  });

  it('deep-freezes the catalogue, its map and every tool object', () => {
    const tool = { name: 'a', inputSchema: { type: 'object', properties: { q: { enum: ['x'] } } } };
    const { catalogue } = buildCatalogue([tool], 0);
    assert.ok(Object.isFrozen(catalogue));
    assert.ok(Object.isFrozen(catalogue.tools.get('a')));
    assert.ok(Object.isFrozen(tool.inputSchema.properties.q.enum));
    assert.throws(() => {
      tool.inputSchema.properties.q.enum.push('y');
    }, TypeError);
    const map = catalogue.tools as unknown as Map<string, unknown>;
    assert.equal(typeof map.set, 'undefined');
    assert.throws(() => {
      (catalogue as { digest: string }).digest = 'x';
    }, TypeError);
  });

  it('offers the ReadonlyMap surface', () => {
    const { catalogue } = buildCatalogue([{ name: 'a' }, { name: 'b' }], 0);
    assert.equal(catalogue.tools.size, 2);
    assert.ok(catalogue.tools.has('b'));
    assert.ok(!catalogue.tools.has('c'));
    assert.deepEqual(
      [...catalogue.tools].map(([k]) => k),
      ['a', 'b'],
    );
    assert.deepEqual(
      [...catalogue.tools.values()].map((t) => t.name),
      ['a', 'b'],
    );
    assert.deepEqual(
      [...catalogue.tools.entries()].map(([k]) => k),
      ['a', 'b'],
    );
    const seen: string[] = [];
    catalogue.tools.forEach((v, k, m) => {
      assert.equal(m, catalogue.tools);
      seen.push(`${k}=${v.name}`);
    });
    assert.deepEqual(seen, ['a=a', 'b=b']);
  });

  it('gives equal catalogues equal digests whatever the listing order', () => {
    const t = () => [{ name: 'a', description: 'x' }, { name: 'b' }, { name: 'c', title: 'C' }];
    const one = buildCatalogue(t(), 0).catalogue.digest;
    const two = buildCatalogue(t().reverse(), 99).catalogue.digest;
    assert.equal(one, two);
    assert.notEqual(one, buildCatalogue(t().slice(1), 0).catalogue.digest);
    assert.equal(buildCatalogue([], 0).catalogue.digest, catalogueDigest([]));
  });
});

describe('backoffDelay', () => {
  it('doubles from the base and caps, with the jitter bounded to the upper half', () => {
    assert.equal(
      backoffDelay(1, 100, 10_000, () => 0),
      50,
    );
    assert.equal(
      backoffDelay(1, 100, 10_000, () => 0.999999),
      100,
    );
    assert.equal(
      backoffDelay(4, 100, 10_000, () => 0.5),
      600,
    );
    assert.equal(
      backoffDelay(50, 100, 10_000, () => 1),
      10_000,
    );
    assert.equal(
      backoffDelay(0, 100, 10_000, () => 0),
      50,
    );
  });

  it('stays within [nominal/2, nominal] for any random value', () => {
    for (const r of [-1, 0, 0.3, 0.7, 2, Number.NaN]) {
      const d = backoffDelay(3, 100, 10_000, () => r);
      assert.ok(d >= 200 && d <= 400, `${r} -> ${d}`);
    }
  });
});
