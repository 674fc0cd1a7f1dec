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
});
