import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCountingUpstream, type CountingUpstream } from '../helpers/counting-upstream.ts';
import { executionPolicy, KEYS_YAML } from '../helpers/execution-policy.ts';
import { metricValue } from '../helpers/metrics.ts';
import { startToolgateProcess, type ToolgateProcess } from '../helpers/toolgate-process.ts';

describe('a policy sidecar left idle after start-up gives its spare heap back', () => {
  let dir: string;
  let upstream: CountingUpstream;
  let gate: ToolgateProcess;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-trim-'));
    await writeFile(join(dir, 'keys.yaml'), KEYS_YAML);
    await writeFile(join(dir, 'policy.yaml'), executionPolicy(''));
    upstream = await startCountingUpstream();
    gate = await startToolgateProcess(upstream.origin, [
      '--policy-file',
      join(dir, 'policy.yaml'),
      '--heap-trim-idle-ms',
      '1000',
    ]);
  });
  after(async () => {
    await gate?.close();
    await upstream?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs an idle heap trim after ready and counts what it released', async () => {
    // Scraped rarely, as Prometheus would: a scrape every few milliseconds is activity, not idleness.
    let trims = 0;
    for (let scrape = 0; trims === 0 && scrape < 30; scrape++) {
      await sleep(1000);
      trims = await metricValue(gate.adminUrl, 'toolgate_heap_trims_total');
    }
    assert.ok(trims >= 1, 'a trim within 30 s of ready');
    assert.ok((await metricValue(gate.adminUrl, 'toolgate_heap_trim_released_bytes_total')) > 0);
  });
});
