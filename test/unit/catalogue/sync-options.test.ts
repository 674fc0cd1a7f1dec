import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CatalogueSync } from '../../../src/catalogue/sync.ts';

const url = new URL('http://127.0.0.1:1/mcp');

describe('CatalogueSync options', () => {
  it('refuses bad settings at construction, naming only the option', () => {
    const bad = [
      { refreshIntervalMs: 0 },
      { refreshIntervalMs: 1.5 },
      { refreshIntervalMs: 1000, requestTimeoutMs: -1 },
      { refreshIntervalMs: 1000, retryBaseMs: Number.NaN },
      { refreshIntervalMs: 1000, retryMaxMs: Number.POSITIVE_INFINITY },
      { refreshIntervalMs: 1000, minRefreshGapMs: -5 },
    ];
    for (const o of bad)
      assert.throws(
        () => new CatalogueSync({ url, ...o }),
        /^TypeError: CatalogueSync: \w+ must be/,
        JSON.stringify(o),
      );
    assert.throws(
      () => new CatalogueSync({ url: new URL('ftp://x/'), refreshIntervalMs: 1000 }),
      /url must be http or https/,
    );
  });

  it('does nothing until started, and closes cleanly when never started', async () => {
    const sync = new CatalogueSync({ url, refreshIntervalMs: 1000 });
    assert.equal(sync.current(), undefined);
    assert.deepEqual(sync.stats(), {
      syncs: 0,
      failures: 0,
      consecutiveFailures: 0,
      lastFailure: undefined,
      lastBuild: undefined,
      era: undefined,
    });
    await sync.close();
    await assert.rejects(sync.start(), /closed before a catalogue was read/);
  });
});
