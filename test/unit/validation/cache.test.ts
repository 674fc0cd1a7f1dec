import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SchemaCache } from '../../../src/validation/cache.ts';

test('compiles once per digest and evicts the least recently used', () => {
  const cache = new SchemaCache(2);
  const a = cache.get('a', { type: 'string' });
  assert.equal(cache.get('a', { type: 'number' }), a, 'same digest, same compiled result');
  cache.get('b', { type: 'number' });
  cache.get('a', {});
  cache.get('c', { type: 'boolean' });
  assert.equal(cache.size, 2);
  assert.equal(cache.get('a', { type: 'number' }), a, 'a was used more recently than b');
  const b = cache.get('b', { type: 'array' });
  assert.ok(b.ok && b.validate([]).ok, 'b was evicted and recompiled from the new schema');
});

test('refusals are cached too', () => {
  const cache = new SchemaCache();
  const r = cache.get('x', { minLenght: 1 });
  assert.deepEqual(r, { ok: false, reason: 'unknown_keyword' });
  assert.equal(cache.get('x', { minLenght: 1 }), r);
});

test('the bound must be a positive integer', () => {
  assert.throws(() => new SchemaCache(0), RangeError);
  assert.throws(() => new SchemaCache(1.5), RangeError);
});
