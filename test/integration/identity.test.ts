import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { startPolicyServer, type PolicyServer } from '../helpers/mcp-policy-server.ts';
import { startPolicyGate, type PolicyGate } from '../helpers/policy-gate.ts';
import { post } from '../helpers/raw.ts';
import { sha256 } from '../helpers/static-keys.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';

const ALICE = 'alice-2f8e4c6a0b1d3e5f7a9c';
const SSOB = 'ssob-6d4b2f0e8c1a3d5b7f9e';

describe('the principal told to the server in a header only toolgate may set', () => {
  let setup: PolicyGate;
  let upstream: PolicyServer;
  let gate: RunningToolgate;
  const alice = { authorization: `Bearer ${ALICE}` };
  const call = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'search_docs', arguments: { query: 'q' } },
  });
  const seen = (i = -1) => upstream.allHeaders.at(i)?.['x-toolgate-principal'];

  before(async () => {
    setup = await startPolicyGate(
      {
        'keys.yaml': `keys:\n  - { sha256: ${sha256(ALICE)}, principal: alice, scopes: [docs] }\n  - { sha256: ${sha256(SSOB)}, principal: "ßob", scopes: [docs] }\n`,
        'policy.yaml':
          'version: 1\nauthentication:\n  staticKeys: { file: keys.yaml }\ngrants:\n  - { principal: "*", tool: search_docs, scopes: [docs], effect: allow }\n',
      },
      ['--principal-header', 'X-Toolgate-Principal'],
    );
    ({ upstream, gate } = setup);
  });
  after(() => setup.close());

  it('carries the authenticated principal on calls and listings, replacing what the client sent', async () => {
    const res = await post(gate.url, call, { ...alice, 'x-toolgate-principal': 'admin' });
    assert.equal(res.status, 200, res.text);
    assert.equal(upstream.calls.at(-1)?.headers['x-toolgate-principal'], 'alice');
    assert.equal(
      (
        await post(gate.url, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}', {
          ...alice,
          'X-TOOLGATE-PRINCIPAL': 'admin',
        })
      ).status,
      200,
    );
    assert.equal(seen(), 'alice');
  });

  it('encodes a principal id that is not visible ASCII as the MCP headers do', async () => {
    assert.equal((await post(gate.url, call, { authorization: `Bearer ${SSOB}` })).status, 200);
    assert.equal(
      upstream.calls.at(-1)?.headers['x-toolgate-principal'],
      `=?base64?${Buffer.from('ßob').toString('base64')}?=`,
    );
  });

  it('on a GET of the MCP endpoint too, and never lets a client set it on a path toolgate passes through', async () => {
    await (
      await request(gate.url, {
        method: 'GET',
        headers: { ...alice, accept: 'text/event-stream', 'x-toolgate-principal': 'admin' },
      })
    ).body.dump();
    assert.equal(seen(), 'alice');
    await (
      await request(`http://127.0.0.1:${gate.port}/.well-known/oauth-protected-resource`, {
        headers: { 'x-toolgate-principal': 'admin' },
      })
    ).body.dump();
    assert.equal(seen(), undefined, 'dropped where nobody was authenticated');
  });
});

describe("without a policy, the principal header is still only toolgate's", () => {
  it("drops the client's copy and adds none, since nobody was authenticated", async () => {
    const upstream = await startPolicyServer();
    const gate = await startToolgate(upstream.origin, ['--principal-header', 'X-Toolgate-Principal']);
    try {
      await gate.ready;
      const call = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'search_docs', arguments: { query: 'q' } },
      });
      assert.equal((await post(gate.url, call, { 'x-toolgate-principal': 'admin' })).status, 200);
      assert.equal(upstream.calls.at(-1)?.headers['x-toolgate-principal'], undefined);
    } finally {
      await gate.close();
      await upstream.close();
    }
  });
});
