import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import type { HeapTrim } from '../../../src/telemetry/channels.ts';
import { startHeapTrim, type HeapTrimmer } from '../../../src/telemetry/heap-trim.ts';

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

  it('does not trim after stop()', async () => {
    subscribe('toolgate:heap_trim', onTrim);
    growYoungGeneration();
    assert.ok(slack() >= 4 * 1024 * 1024, `the test needs heap slack to trim (has ${slack()} bytes)`);
    startHeapTrim(WINDOW_MS).stop();
    await sleep(WINDOW_MS * 4);
    assert.equal(trims.length, 0);
  });
});
