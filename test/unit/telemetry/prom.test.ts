import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import * as prom from '../../../src/telemetry/prom.ts';

/**
 * prom.ts loads prom-client's metric classes without the package index. They
 * must be the index's own (a Registry from either side takes metrics from the
 * other), and loading them must leave out what the index drags in, so a
 * prom-client upgrade that moves a file or pulls the index back fails here.
 */
describe('prom-client without its index', () => {
  it("is the index's own classes", async () => {
    const index = await import('prom-client');
    assert.equal(prom.Registry, index.Registry);
    assert.equal(prom.Counter, index.Counter);
    assert.equal(prom.Gauge, index.Gauge);
    assert.equal(prom.Histogram, index.Histogram);
    assert.equal(prom.collectDefaultMetrics, index.collectDefaultMetrics);
  });

  it('counts and exposes, default metrics included, without loading https, tls or zlib', () => {
    const script = `
      const { Registry, Counter, collectDefaultMetrics } = await import(${JSON.stringify(new URL('../../../src/telemetry/prom.ts', import.meta.url).href)});
      const registry = new Registry();
      collectDefaultMetrics({ register: registry });
      new Counter({ name: 'probe_total', help: 'probe', registers: [registry] }).inc(2);
      const text = await registry.metrics();
      const loaded = process.moduleLoadList.filter((m) => /^NativeModule (https|tls|zlib)$/.test(m));
      process.stdout.write(JSON.stringify({ probe: text.includes('probe_total 2'), defaults: text.includes('process_cpu_user_seconds_total'), loaded }));
    `;
    const out = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
    ) as {
      probe: boolean;
      defaults: boolean;
      loaded: string[];
    };
    assert.deepEqual(out, { probe: true, defaults: true, loaded: [] });
  });
});
