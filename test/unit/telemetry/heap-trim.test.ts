import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import type { HeapTrim } from '../../../src/telemetry/channels.ts';
import { startHeapTrim, trimAfterLoad, type HeapTrimmer } from '../../../src/telemetry/heap-trim.ts';

/** Short windows keep the test quick; the setting's own floor is 1 s. */
const WINDOW_MS = 200;

const youngGeneration = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
const slack = () => getHeapStatistics().total_heap_size - getHeapStatistics().used_heap_size;

/**
 * What start-up does to the heap: allocations that mostly survive a few
 * scavenges, so V8 grows the young generation, then become garbage.
 */
function growYoungGeneration(): void {
  let keep: unknown[] = [];
  for (let round = 0; round < 40; round++) {
    for (let i = 0; i < 20_000; i++) keep.push({ round, i, text: `value ${i}` });
    if (keep.length > 200_000) keep = [];
  }
  keep.length = 0;
}

/** Spins the CPU for `ms` in short slices, so the trim's timer still runs between them. */
async function busyFor(ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const slice = performance.now() + 20;
    while (performance.now() < slice);
    await new Promise((r) => setImmediate(r));
  }
}

describe('idle heap trim', () => {
  const trims: HeapTrim[] = [];
  const onTrim = (m: unknown) => trims.push(m as HeapTrim);
  let trimmer: HeapTrimmer | undefined;
  afterEach(() => {
    trimmer?.stop();
    unsubscribe('toolgate:heap_trim', onTrim);
    trims.length = 0;
  });

  it('gives the spare young generation back once the process falls idle after activity, and only once per activity', async () => {
    subscribe('toolgate:heap_trim', onTrim);
    growYoungGeneration();
    const grown = youngGeneration();
    assert.ok(slack() >= 4 * 1024 * 1024, `the test needs heap slack to trim (has ${slack()} bytes)`);
    trimmer = startHeapTrim(WINDOW_MS);
    for (let waited = 0; trims.length === 0 && waited < 20_000; waited += 50) await sleep(50);
    assert.equal(trims.length, 1, 'no trim within 20 s of idleness');
    const [trim] = trims;
    assert.ok((trim?.releasedBytes ?? 0) > 0, JSON.stringify(trim));
    assert.ok((trim?.durationSeconds ?? -1) >= 0);
    assert.ok(youngGeneration() < grown, `young generation ${youngGeneration()} not below ${grown}`);
    // Idle since: nothing new to give back, so no second collection.
    await sleep(WINDOW_MS * 4);
    assert.equal(trims.length, 1);
  });

  it('never trims while the process is busy; trims once it falls idle', async () => {
    subscribe('toolgate:heap_trim', onTrim);
    growYoungGeneration();
    assert.ok(slack() >= 4 * 1024 * 1024, `the test needs heap slack to trim (has ${slack()} bytes)`);
    trimmer = startHeapTrim(WINDOW_MS);
    await busyFor(WINDOW_MS * 5);
    assert.equal(trims.length, 0, 'trimmed during activity');
    for (let waited = 0; trims.length === 0 && waited < 20_000; waited += 50) await sleep(50);
    assert.equal(trims.length, 1, 'no trim within 20 s of idleness');
  });

  it('waits twice as long of idleness for each next trim, once traffic has come back', async () => {
    subscribe('toolgate:heap_trim', onTrim);
    growYoungGeneration();
    assert.ok(slack() >= 4 * 1024 * 1024, `the test needs heap slack to trim (has ${slack()} bytes)`);
    trimmer = startHeapTrim(WINDOW_MS);
    for (let waited = 0; trims.length === 0 && waited < 20_000; waited += 10) await sleep(10);
    assert.equal(trims.length, 1, 'no first trim within 20 s of idleness');
    const idleGaps: number[] = [];
    for (let n = 2; n <= 3; n++) {
      // Traffic comes back, then stops.
      growYoungGeneration();
      await busyFor(WINDOW_MS * 2);
      const idleSince = performance.now();
      for (let waited = 0; trims.length < n && waited < 20_000; waited += 10) await sleep(10);
      assert.equal(trims.length, n, `no trim ${n} within 20 s of idleness`);
      idleGaps.push(performance.now() - idleSince);
    }
    // The window doubles (2 and then 4 windows); the sampling tick, one window long, can only delay a trim further.
    assert.ok((idleGaps[0] ?? 0) >= 2 * WINDOW_MS - 50, `second trim after ${idleGaps[0]} ms idle`);
    assert.ok((idleGaps[1] ?? 0) >= 4 * WINDOW_MS - 50, `third trim after ${idleGaps[1]} ms idle`);
  });

  it('does not trim after stop()', async () => {
    subscribe('toolgate:heap_trim', onTrim);
    growYoungGeneration();
    assert.ok(slack() >= 4 * 1024 * 1024, `the test needs heap slack to trim (has ${slack()} bytes)`);
    startHeapTrim(WINDOW_MS).stop();
    await sleep(WINDOW_MS * 4);
    assert.equal(trims.length, 0);
  });
});

describe('heap trim after a load', () => {
  const trims: HeapTrim[] = [];
  const onTrim = (m: unknown) => trims.push(m as HeapTrim);
  afterEach(() => {
    unsubscribe('toolgate:heap_trim', onTrim);
    trims.length = 0;
  });

  /** A load that holds ~150 MB at its peak and keeps a little: what parsing a large YAML key file does. */
  async function bigLoad(): Promise<string> {
    let peak: object[] = [];
    for (let i = 0; i < 1_500_000; i++) peak.push({ i, text: `entry ${i}` });
    await sleep(1);
    const kept = `${peak.length} entries`;
    peak = [];
    return kept;
  }

  it('gives back what a load that grew the heap by more than 64 MB left unused, at once', async () => {
    subscribe('toolgate:heap_trim', onTrim);
    // A trim first, so the heap starts small and the load's growth is the load's.
    await trimAfterLoad(bigLoad)();
    trims.length = 0;
    const total = () => getHeapStatistics().total_heap_size;
    const before = total();
    assert.equal(await trimAfterLoad(bigLoad)(), '1500000 entries');
    assert.equal(trims.length, 1, `no trim after the heap grew from ${before} bytes`);
    assert.ok((trims[0]?.releasedBytes ?? 0) > 64 * 1024 * 1024, JSON.stringify(trims[0]));
    assert.ok(
      total() < before + 64 * 1024 * 1024,
      `heap still ${total()} bytes after the trim (${before} before the load)`,
    );
  });

  it('leaves the heap alone after a load that did not grow it that much', async () => {
    subscribe('toolgate:heap_trim', onTrim);
    const small = trimAfterLoad(async (n: number) => Array.from({ length: n }, (_, i) => i).length);
    assert.equal(await small(10_000), 10_000);
    assert.equal(trims.length, 0);
  });
});
