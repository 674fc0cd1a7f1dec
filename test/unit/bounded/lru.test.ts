import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Lru } from '../../../src/bounded/lru.ts';

describe('Lru', () => {
  it('evicts the least recently used entry and hands it back; a replaced key evicts nothing', () => {
    const lru = new Lru<string, number>(2);
    assert.equal(lru.set('a', 1), undefined);
    assert.equal(lru.set('b', 2), undefined);
    assert.equal(lru.get('a'), 1);
    assert.equal(lru.set('b', 3), undefined, 'replacing a key makes room for itself');
    assert.equal(lru.set('c', 4), 1, 'a was used before b was replaced');
    assert.equal(lru.peek('a'), undefined);
    assert.deepEqual([lru.peek('b'), lru.peek('c'), lru.size], [3, 4, 2]);
  });

  it('keeps recency right when the entry used is already the newest, and after it is deleted or cleared', () => {
    const lru = new Lru<string, number>(3);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('c', 3);
    assert.equal(lru.get('c'), 3);
    assert.equal(lru.get('c'), 3);
    assert.equal(lru.get('a'), 1);
    assert.deepEqual(
      [...lru.entries()].map(([k]) => k),
      ['b', 'c', 'a'],
    );
    lru.delete('a');
    assert.equal(lru.get('b'), 2, 'the deleted newest is forgotten: b moves to the end');
    assert.deepEqual(
      [...lru.entries()].map(([k]) => k),
      ['c', 'b'],
    );
    lru.clear();
    lru.set('x', 9);
    lru.set('y', 8);
    assert.equal(lru.get('x'), 9);
    assert.equal(lru.set('z', 7), undefined);
    assert.equal(lru.set('w', 6), 8, 'y is the least recently used');
  });
});
