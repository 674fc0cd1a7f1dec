import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { declaresUrlElicitation, requestCapabilities } from '../../../src/mcp/capabilities.ts';

describe('declaresUrlElicitation', () => {
  it('counts only an elicitation.url object: an empty elicitation is form mode', () => {
    assert.equal(declaresUrlElicitation({ elicitation: { url: {} } }), true);
    assert.equal(declaresUrlElicitation({ elicitation: { form: {}, url: {} } }), true);
    for (const caps of [
      { elicitation: {} },
      { elicitation: { form: {} } },
      { elicitation: { url: true } },
      { elicitation: 'url' },
      {},
      null,
      undefined,
      [],
    ]) {
      assert.equal(declaresUrlElicitation(caps), false, JSON.stringify(caps));
    }
  });

  it('reads 2026-07-28 per-request capabilities from _meta', () => {
    const params = { _meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } } };
    assert.equal(declaresUrlElicitation(requestCapabilities(params)), true);
    assert.equal(declaresUrlElicitation(requestCapabilities({ _meta: 'x' })), false);
    assert.equal(declaresUrlElicitation(requestCapabilities(undefined)), false);
  });
});
