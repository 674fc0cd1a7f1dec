import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildCatalogue } from '../../../src/catalogue/catalogue.ts';
import { reportEnforceability } from '../../../src/catalogue/enforceability.ts';
import { catalogueState, type CatalogueState } from '../../../src/telemetry/channels.ts';

describe('reportEnforceability', () => {
  it('counts every tool whose schema is unenforceable, when tools share schemas', async () => {
    const good = { type: 'object', properties: { id: { type: 'string' } } };
    const remote = { type: 'object', properties: { id: { $ref: 'https://example.com/id.json' } } };
    const { catalogue } = buildCatalogue(
      [
        { name: 'a', inputSchema: good },
        { name: 'b', inputSchema: remote },
        { name: 'c', inputSchema: structuredClone(good) },
        { name: 'd', inputSchema: structuredClone(remote) },
        { name: 'e' },
        { name: 'f' },
      ],
      0,
    );
    const seen: CatalogueState[] = [];
    const listener = (m: unknown) => seen.push(m as CatalogueState);
    catalogueState.subscribe(listener);
    try {
      await reportEnforceability(catalogue, undefined, () => true);
    } finally {
      catalogueState.unsubscribe(listener);
    }
    assert.deepEqual(seen, [{ tools: 6, unenforceable: 4 }]);
  });
});
