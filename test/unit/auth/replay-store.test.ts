import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryReplayStore } from '../../../src/auth/replay-store.ts';

function clock(start = 1_000_000) {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

test('an id is claimable once while live, and again after it expired', async () => {
  const c = clock();
  const s = new MemoryReplayStore({ now: c.now });
  assert.equal(await s.claim('a', c.now() + 1000), 'claimed');
  assert.equal(await s.claim('a', c.now() + 1000), 'refused');
  c.advance(1000);
  assert.equal(await s.claim('a', c.now() + 1000), 'claimed');
});

test('an already expired claim is refused', async () => {
  const c = clock();
  const s = new MemoryReplayStore({ now: c.now });
  assert.equal(await s.claim('a', c.now()), 'refused');
  assert.equal(await s.claim('b', Number.NaN), 'refused');
  assert.equal(s.size, 0);
});

test('bounded: when full of live ids new claims are refused, never a live id forgotten', async () => {
  const c = clock();
  const s = new MemoryReplayStore({ now: c.now, maxEntries: 3 });
  for (const id of ['a', 'b', 'c']) assert.equal(await s.claim(id, c.now() + 10_000), 'claimed');
  assert.equal(await s.claim('d', c.now() + 10_000), 'unavailable', 'full: retryable, not a replay');
  assert.equal(await s.claim('a', c.now() + 10_000), 'refused');
  assert.equal(s.size, 3);
});

test('expired entries are evicted to make room', async () => {
  const c = clock();
  const s = new MemoryReplayStore({ now: c.now, maxEntries: 20 });
  for (let i = 0; i < 20; i++) assert.equal(await s.claim(`short-${i}`, c.now() + (i < 10 ? 100 : 50_000)), 'claimed');
  c.advance(200);
  // 10 live ids remain, so exactly 10 more fit; the 11th would need a live id forgotten.
  for (let i = 0; i < 10; i++) assert.equal(await s.claim(`new-${i}`, c.now() + 1000), 'claimed', `new-${i}`);
  assert.equal(await s.claim('one-too-many', c.now() + 1000), 'unavailable');
  assert.equal(s.size, 20);
  assert.equal(await s.claim('short-15', c.now() + 1000), 'refused');
  assert.equal(await s.claim('short-5', c.now() + 1000), 'unavailable');
});
