import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { connectModernClient, startV2Server, type V2Server } from '../helpers/mcp-v2-server.ts';
import { startGateWith, type PolicyGate } from '../helpers/policy-gate.ts';
import { post } from '../helpers/raw.ts';
import type { RunningToolgate } from '../helpers/toolgate.ts';

const CANARY = 'canary-0d7f-region';
const policy = `
version: 1
authentication:
  anonymous: { enabled: true }
grants:
  - { principal: anonymous, tool: execute_sql, effect: allow }
`;

/** SEP-2243: tool parameters mirrored into Mcp-Param-* headers must agree with the body toolgate checked. */
describe('Mcp-Param headers of 2026-07-28 tools (v2 SDK client and server)', () => {
  let setup: PolicyGate<V2Server>;
  let upstream: V2Server;
  let gate: RunningToolgate;
  let client: Client;
  const modern = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'execute_sql' };
  const body = (region: string, version = '2026-07-28') =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/call',
      params: {
        name: 'execute_sql',
        arguments: { region, query: 'SELECT 1' },
        _meta: { 'io.modelcontextprotocol/protocolVersion': version, 'io.modelcontextprotocol/clientCapabilities': {} },
      },
    });
  const calls = () =>
    upstream.seen.filter((r) => r.headers['mcp-method'] === 'tools/call' || r.method === 'POST').length;

  before(async () => {
    setup = await startGateWith(startV2Server, { 'policy.yaml': policy });
    ({ upstream, gate } = setup);
    client = await connectModernClient(gate.url);
  });
  after(async () => {
    await client.close();
    await setup.close();
  });

  it('enforces a schema that carries x-mcp-header, and forwards the mirrored header the client sent', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['execute_sql'],
    );
    const result = await client.callTool({ name: 'execute_sql', arguments: { region: 'us-west1', query: 'SELECT 1' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'us-west1: SELECT 1' }]);
    assert.equal(upstream.seen.at(-1)?.headers['mcp-param-region'], 'us-west1');
  });

  it('refuses a header that disagrees with the body, or is missing, or comes without its value, before the server sees it', async () => {
    const before = calls();
    const cases: [Record<string, string>, string][] = [
      [{ ...modern, 'mcp-param-region': CANARY }, body('us-west1')],
      [{ ...modern, 'mcp-param-region': `=?base64?${Buffer.from(CANARY).toString('base64')}?=` }, body('us-west1')],
      [modern, body('us-west1')],
      [{ ...modern, 'mcp-param-region': 'us-west1' }, body('us-west1').replace('"region":"us-west1",', '')],
    ];
    for (const [headers, text] of cases) {
      const res = await post(gate.url, text, headers);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.json().error?.code, -32020);
      assert.equal(res.json().error?.data?.code, 'header_mismatch', 'refused by toolgate, not by the server');
      assert.ok(!res.text.includes(CANARY));
    }
    assert.equal(calls(), before, 'nothing was forwarded');
    const encoded = await post(gate.url, body('zürich'), {
      ...modern,
      'mcp-param-region': `=?base64?${Buffer.from('zürich').toString('base64')}?=`,
    });
    assert.equal(encoded.status, 200, encoded.text);
  });

  it('does not forward Mcp-Param headers it ignored on a request without the 2026-07-28 version', async () => {
    await post(gate.url, body('us-west1', '2025-11-25'), {
      'mcp-protocol-version': '2025-11-25',
      'mcp-param-region': CANARY,
    });
    const last = upstream.seen.at(-1);
    assert.equal(last?.headers['mcp-protocol-version'], '2025-11-25');
    assert.equal(last?.headers['mcp-param-region'], undefined);
  });
});
