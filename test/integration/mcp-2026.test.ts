import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { post } from '../helpers/raw.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';
import { connectModernClient, startV2Server, type V2Server } from '../helpers/mcp-v2-server.ts';
import { startGateWith, type PolicyGate } from '../helpers/policy-gate.ts';

describe('2026-07-28 stateless traffic through toolgate (v2 SDK client and server)', () => {
  let upstream: V2Server;
  let gate: RunningToolgate;
  let client: Client;

  before(async () => {
    upstream = await startV2Server();
    gate = await startToolgate(upstream.origin);
    await gate.ready;
    client = await connectModernClient(gate.url);
  });
  after(async () => {
    await client.close();
    await gate.close();
    await upstream.close();
  });

  it('lists tools with the 2026-07-28 headers and _meta envelope', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['città', 'echo', 'execute_sql'].sort());
    const list = upstream.seen.find((r) => r.headers['mcp-method'] === 'tools/list');
    assert.ok(list, 'upstream received Mcp-Method: tools/list');
    assert.equal(list.headers['mcp-protocol-version'], '2026-07-28');
  });

  it('calls a tool with Mcp-Name mirrored from the body', async () => {
    const result = await client.callTool({ name: 'echo', arguments: { text: 'stateless' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'stateless' }]);
    const call = upstream.seen.findLast((r) => r.headers['mcp-method'] === 'tools/call');
    assert.equal(call?.headers['mcp-name'], 'echo');
  });

  it('accepts a non-ASCII tool name sent in the =?base64?…?= header form', async () => {
    const result = await client.callTool({ name: 'città', arguments: {} });
    assert.deepEqual(result.content, [{ type: 'text', text: 'ciao' }]);
    const call = upstream.seen.findLast((r) => r.headers['mcp-method'] === 'tools/call');
    assert.match(String(call?.headers['mcp-name']), /^=\?base64\?.+\?=$/);
  });
});

describe('results toolgate answers itself, to a 2026-07-28 client (v2 SDK)', () => {
  let setup: PolicyGate<V2Server>;
  let gate: RunningToolgate;
  let client: Client;

  before(async () => {
    const policy =
      'version: 1\nauthentication:\n  anonymous: { enabled: true }\ngrants:\n  - { principal: anonymous, tool: echo, effect: allow }\n';
    setup = await startGateWith(startV2Server, { 'policy.yaml': policy }, ['--deferred-tools', 'true']);
    ({ gate } = setup);
    client = await connectModernClient(gate.url);
  });
  after(async () => {
    await client.close();
    await setup.close();
  });

  it('carry resultType, which 2026-07-28 clients require: search_tools and toolgate/discover', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['search_tools'],
    );
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'echo text back' } });
    assert.equal((found.structuredContent as { tools: { name: string }[] }).tools[0]?.name, 'echo');
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'toolgate/discover',
      params: { query: 'echo', _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
    });
    const res = await post(gate.url, body, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'toolgate/discover' });
    assert.equal(res.status, 200, res.text);
    assert.equal((res.json().result as { resultType?: string }).resultType, 'complete');
  });
});
