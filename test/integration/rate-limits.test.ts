import assert from 'node:assert/strict';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PolicyServer } from '../helpers/mcp-policy-server.ts';
import { metricValue } from '../helpers/metrics.ts';
import { startPolicyGate, type PolicyGate } from '../helpers/policy-gate.ts';
import { passed, post, refusalOf, refusedCall } from '../helpers/raw.ts';
import { sha256 } from '../helpers/static-keys.ts';
import type { RunningToolgate } from '../helpers/toolgate.ts';
import { waitFor } from '../helpers/wait.ts';

const CANARY = 'canary-5be1-rate-secret';
const ALICE = 'alice-3c9e1f7a5b2d4e6f8a0b';
const BOB = 'bob-8d2f4a6c1e3b5d7f9a1c';

const policy = (limits: string) => `
version: 1
authentication:
  staticKeys: { file: keys.yaml }
grants:
  - { principal: "*", tool: search_docs, scopes: [docs], effect: allow }
  - { principal: "*", tool: delete_repo, scopes: [docs], effect: allow }
rateLimits:
${limits}
`;
const TWO_DELETES_AN_HOUR = '  - { principal: "*", tool: delete_repo, requests: 2, per: hour }';
const KEYS = `keys:\n  - { sha256: ${sha256(ALICE)}, principal: alice, scopes: [docs] }\n  - { sha256: ${sha256(BOB)}, principal: bob, scopes: [docs] }\n`;

describe('rate limits from the policy, in front of a real MCP server', () => {
  let setup: PolicyGate;
  let upstream: PolicyServer;
  let gate: RunningToolgate;
  const alice = { authorization: `Bearer ${ALICE}` };
  const bob = { authorization: `Bearer ${BOB}` };
  const del = (id: number, repo = 'a/b') =>
    JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'delete_repo', arguments: { repo } } });

  before(async () => {
    setup = await startPolicyGate({ 'keys.yaml': KEYS, 'policy.yaml': policy(TWO_DELETES_AN_HOUR) });
    ({ upstream, gate } = setup);
  });
  after(() => setup.close());

  it('admits the burst, then answers 429 rate_limited with Retry-After; nothing more is forwarded, nothing echoed', async () => {
    const before = upstream.calls.length;
    assert.ok(passed(await post(gate.url, del(1), alice)));
    assert.ok(passed(await post(gate.url, del(2), alice)));
    const res = await post(gate.url, del(3, CANARY), alice);
    const data = refusedCall(res, 'rate_limited');
    assert.equal(data.hint, 'retry_later');
    assert.equal(data.retryable, true);
    // Two an hour: the next call is earned back within half an hour.
    const retryAfterMs = Number(data.retryAfterMs);
    assert.ok(retryAfterMs > 0 && retryAfterMs <= 1_800_000, String(retryAfterMs));
    assert.match(refusalOf(res)?.text ?? '', new RegExp(`Wait ${Math.ceil(retryAfterMs / 1000)} s`));
    assert.ok(!res.text.includes(CANARY));
    assert.equal(upstream.calls.length, before + 2);
    assert.equal(
      await metricValue(gate.adminUrl, 'toolgate_requests_total', { method: 'tools/call', outcome: 'rate_limited' }),
      1,
    );
  });

  it('counts per principal and per rule: bob and other tools are not held back by alice', async () => {
    assert.ok(passed(await post(gate.url, del(4), bob)));
    const search = JSON.stringify({
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/call',
      params: { name: 'search_docs', arguments: { query: 'q' } },
    });
    assert.ok(passed(await post(gate.url, search, alice)));
  });

  it('an SDK client hands the refusal on as a tool result saying how long to wait', async () => {
    const client = new Client({ name: 'it', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(gate.url), { requestInit: { headers: alice } }));
    try {
      const r = await client.callTool({ name: 'delete_repo', arguments: { repo: 'a/b' } });
      assert.equal(r.isError, true);
      assert.match((r.content as { text: string }[])[0]?.text ?? '', /too many calls\. Wait \d+ s/);
      assert.equal((r._meta?.['io.toolgate/error'] as { code?: string } | undefined)?.code, 'rate_limited');
    } finally {
      await client.close();
    }
  });

  it('a reload that keeps the rule keeps its buckets; a changed rule starts full', async () => {
    const reloads = () => metricValue(gate.adminUrl, 'toolgate_policy_reloads_total', { outcome: 'applied' });
    const replace = async (text: string) => {
      const seen = await reloads();
      await writeFile(join(setup.dir, 'next.yaml'), text);
      await rename(join(setup.dir, 'next.yaml'), join(setup.dir, 'policy.yaml'));
      await waitFor(async () => (await reloads()) > seen, 'the policy reload');
    };
    await replace(`${policy(TWO_DELETES_AN_HOUR)}# the same rules, saved again\n`);
    assert.equal(
      refusalOf(await post(gate.url, del(6), alice))?.code,
      'rate_limited',
      'the unchanged rule still holds alice back',
    );
    await replace(policy('  - { principal: "*", tool: delete_repo, requests: 3, per: hour }'));
    assert.ok(passed(await post(gate.url, del(7), alice)), 'a new rule, a new bucket');
  });
});

describe('rate limits on discovery, which toolgate answers itself', () => {
  let setup: PolicyGate;
  let gate: RunningToolgate;
  const alice = { authorization: `Bearer ${ALICE}` };

  before(async () => {
    const limits = '  - { principal: "*", tool: search_tools, requests: 2, per: hour }';
    setup = await startPolicyGate({ 'keys.yaml': KEYS, 'policy.yaml': policy(limits) }, ['--deferred-tools', 'true']);
    ({ gate } = setup);
  });
  after(() => setup.close());

  it('counts toolgate/discover and search_tools calls as one tool, search_tools', async () => {
    const discover = (id: number) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'toolgate/discover',
        params: { query: `delete a repository ${CANARY}` },
      });
    const search = (id: number) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'search_tools', arguments: { query: 'delete a repository' } },
      });
    assert.ok(passed(await post(gate.url, discover(1), alice)));
    assert.ok(passed(await post(gate.url, search(2), alice)));
    // toolgate/discover is not a tool call: a JSON-RPC error at 200; search_tools is: a tool result.
    for (const [body, form] of [
      [discover(3), 'error'],
      [search(4), 'tool_result'],
    ] as const) {
      const res = await post(gate.url, body, alice);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual([refusalOf(res)?.form, refusalOf(res)?.code], [form, 'rate_limited']);
      assert.ok(!res.text.includes(CANARY));
    }
    assert.equal(
      await metricValue(gate.adminUrl, 'toolgate_decisions_total', { stage: 'rate_limit', outcome: 'rate_limited' }),
      2,
    );
    // The limit is on discovery only: calls of other tools pass.
    const del = JSON.stringify({
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/call',
      params: { name: 'delete_repo', arguments: { repo: 'a/b' } },
    });
    assert.ok(passed(await post(gate.url, del, alice)));
  });
});
