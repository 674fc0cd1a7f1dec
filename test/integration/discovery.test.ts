import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { POLICY_TOOLS, startPolicyServer, type PolicyServer } from '../helpers/mcp-policy-server.ts';
import { passed, post, refusalOf, refusedCall } from '../helpers/raw.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';
import { sha256 } from '../helpers/static-keys.ts';

const CANARY = 'canary-5e1d-secret-query';
const ALICE = 'alice-0f3e9a7c5b1d2e4f6a8b';
const BOB = 'bob-9a8b7c6d5e4f3a2b1c0d';

const policy = `
version: 1
authentication:
  staticKeys: { file: keys.yaml }
tools:
  search_docs: { tier: critical }
  rotate_keys: { aliases: [credential rollover] }
grants:
  - { principal: "*", tool: search_docs, scopes: [docs], effect: allow }
  - { principal: "*", tool: rotate_keys, scopes: [docs], effect: allow }
  - { principal: "*", tool: delete_repo, scopes: [docs], effect: allow }
  - { principal: "*", tool: huge_tool, scopes: [docs], effect: allow }
  - { principal: "*", tool: remove_branch, scopes: [docs], effect: allow }
  - { principal: "*", tool: remove_tag, scopes: [docs], effect: allow }
  - { principal: "*", tool: remove_release, scopes: [docs], effect: allow }
  - { principal: alice, tool: delete_repo, effect: deny }
`;

const discover = (id: number, params: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'toolgate/discover', params });
const searchCall = (id: number, args: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'search_tools', arguments: args } });
const list = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' });

interface Found {
  tools: { name: string; inputSchema: unknown }[];
  total: number;
  nextCursor?: string;
}

describe('discovery doors in deferred mode', () => {
  let dir: string;
  let upstream: PolicyServer;
  let gate: RunningToolgate;
  let plain: RunningToolgate;
  const alice = { authorization: `Bearer ${ALICE}` };
  const bob = { authorization: `Bearer ${BOB}` };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-discovery-'));
    await writeFile(
      join(dir, 'keys.yaml'),
      `keys:\n  - { sha256: ${sha256(ALICE)}, principal: alice, scopes: [docs] }\n  - { sha256: ${sha256(BOB)}, principal: bob, scopes: [docs] }\n`,
    );
    await writeFile(join(dir, 'policy.yaml'), policy);
    upstream = await startPolicyServer();
    upstream.extraTools.push(
      {
        name: 'huge_tool',
        description: 'An enormous schema for archive export',
        inputSchema: { type: 'object', description: 'archive export '.repeat(6000) },
      },
      {
        name: 'remove_branch',
        description: 'Remove a git branch from the repository',
        inputSchema: { type: 'object' },
      },
      { name: 'remove_tag', description: 'Remove a git tag from the repository', inputSchema: { type: 'object' } },
      { name: 'remove_release', description: 'Remove a release from the repository', inputSchema: { type: 'object' } },
    );
    gate = await startToolgate(upstream.origin, [
      '--policy-file',
      join(dir, 'policy.yaml'),
      '--deferred-tools',
      'true',
    ]);
    plain = await startToolgate(upstream.origin, ['--policy-file', join(dir, 'policy.yaml')]);
    await Promise.all([gate.ready, plain.ready]);
  });
  after(async () => {
    await Promise.all([gate.close(), plain.close()]);
    await upstream.close();
    await rm(dir, { recursive: true, force: true });
  });

  const names = (r: { tools: { name: string }[] }) => r.tools.map((t) => t.name);

  it('lists only critical/base/alwaysInclude tools plus search_tools, then what discovery returned', async () => {
    const first = await post(gate.url, list(1), alice);
    assert.equal(first.status, 200);
    assert.deepEqual(names(first.json().result as Found), ['search_docs', 'search_tools']);

    const found = await post(gate.url, discover(2, { query: 'credential rollover', limit: 1 }), alice);
    assert.equal(found.status, 200, found.text);
    assert.deepEqual(names(found.json().result as Found), ['rotate_keys']);

    const after = await post(gate.url, list(3), alice);
    assert.deepEqual(names(after.json().result as Found), ['search_docs', 'rotate_keys', 'search_tools']);
  });

  it('returns complete input schemas through both doors', async () => {
    const viaMethod = (await post(gate.url, discover(4, { query: 'search documentation' }), alice)).json()
      .result as Found;
    const viaTool = (await post(gate.url, searchCall(5, { query: 'search documentation' }), alice)).json().result as {
      structuredContent: Found;
      content: { type: string; text: string }[];
    };
    assert.deepEqual(viaMethod.tools.find((t) => t.name === 'search_docs')?.inputSchema, POLICY_TOOLS[0]?.inputSchema);
    assert.deepEqual(viaTool.structuredContent.tools, viaMethod.tools);
    assert.deepEqual(JSON.parse(viaTool.content[0]?.text ?? ''), viaTool.structuredContent);
  });

  it('filters by permission before ranking: a denied tool never shows, nor counts', async () => {
    const a = (await post(gate.url, discover(6, { query: 'delete repository' }), alice)).json().result as Found;
    const b = (await post(gate.url, discover(7, { query: 'delete repository' }), bob)).json().result as Found;
    assert.ok(!names(a).includes('delete_repo'));
    assert.ok(names(b).includes('delete_repo'));
    assert.equal(b.total, a.total + 1);
  });

  it('pages with a signed cursor bound to the caller and the query', async () => {
    const p1 = (await post(gate.url, discover(8, { query: 'remove from the repository', limit: 2 }), alice)).json()
      .result as Found;
    assert.equal(p1.tools.length, 2);
    assert.ok(p1.nextCursor);
    const p2 = await post(
      gate.url,
      discover(9, { query: 'remove from the repository', limit: 2, cursor: p1.nextCursor }),
      alice,
    );
    assert.equal(p2.status, 200, p2.text);
    const second = p2.json().result as Found;
    assert.ok(second.tools.length >= 1);
    assert.equal(
      new Set([...names(p1), ...names(second)]).size,
      p1.tools.length + second.tools.length,
      'pages do not overlap',
    );

    for (const [why, params, who] of [
      ['another query', { query: 'remove the repository', limit: 2, cursor: p1.nextCursor }, alice],
      ['another limit', { query: 'remove from the repository', limit: 3, cursor: p1.nextCursor }, alice],
      ['another principal', { query: 'remove from the repository', limit: 2, cursor: p1.nextCursor }, bob],
      ['a tampered cursor', { query: 'remove from the repository', limit: 2, cursor: `${p1.nextCursor}x` }, alice],
    ] as const) {
      const res = await post(gate.url, discover(10, params), who);
      // toolgate/discover is no tool call: its refusals are JSON-RPC errors at HTTP 200, as an MCP server answers.
      assert.equal(res.status, 200, why);
      assert.equal(res.json().error?.data?.code, 'invalid_cursor', why);
    }
  });

  it('refuses a matching tool whose schema alone exceeds 64 KiB with tool_schema_too_large', async () => {
    const res = await post(gate.url, discover(11, { query: 'enormous archive export', limit: 1 }), alice);
    assert.equal(res.status, 200);
    assert.equal(res.json().error?.data?.code, 'tool_schema_too_large');
    assert.ok(res.text.length < 1000, 'nothing of the schema is returned');
  });

  it('refuses bad input on both doors without echoing it', async () => {
    const m = await post(gate.url, discover(12, { query: CANARY, limit: 99, sort: CANARY }), alice);
    assert.equal(m.status, 200);
    assert.equal(m.json().error?.code, -32602);
    assert.equal(m.json().error?.data?.code, 'invalid_params');
    const t = await post(gate.url, searchCall(13, { query: `${CANARY}\u0000` }), alice);
    assert.equal(t.status, 200);
    assert.equal(t.json().error?.data?.code, 'invalid_arguments');
    assert.ok(!m.text.includes(CANARY) && !t.text.includes(CANARY));
    // Counted where every refusal is counted, not only as a request.
    const metrics = await (await fetch(`${gate.adminUrl}/metrics`)).text();
    assert.match(metrics, /toolgate_decisions_total\{stage="discovery",outcome="invalid_params"[^}]*\} [1-9]/);
    assert.match(metrics, /toolgate_decisions_total\{stage="discovery",outcome="invalid_arguments"[^}]*\} [1-9]/);
    assert.match(metrics, /toolgate_validation_failures_total\{keyword="[a-z]+"\} [1-9]/);
  });

  it('on 2025-11-25 answers bad search_tools arguments as a tool result the model reads', async () => {
    const t = await post(gate.url, searchCall(16, { query: CANARY, limit: 99 }), {
      ...alice,
      'mcp-protocol-version': '2025-11-25',
    });
    assert.equal(t.status, 200);
    const result = t.json().result as {
      isError: boolean;
      content: { text: string }[];
      structuredContent: { code: string };
    };
    assert.equal(result.isError, true);
    assert.match(result.content[0]?.text ?? '', /argument \/limit/);
    assert.equal(result.structuredContent.code, 'invalid_arguments');
    assert.ok(!t.text.includes(CANARY));
  });

  it('keeps onDemand tools callable, checked against grants and schema, whether listed or not', async () => {
    const ok = await post(
      gate.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 14,
        method: 'tools/call',
        params: { name: 'delete_repo', arguments: { repo: 'a/b' } },
      }),
      bob,
    );
    assert.ok(passed(ok), ok.text);
    const denied = await post(
      gate.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 15,
        method: 'tools/call',
        params: { name: 'delete_repo', arguments: { repo: 'a/b' } },
      }),
      alice,
    );
    refusedCall(denied, 'tool_not_granted');
  });

  it('invalidates an outstanding cursor when a grant is revoked (policy reloaded)', async () => {
    const p1 = (await post(gate.url, discover(20, { query: 'remove from the repository', limit: 1 }), alice)).json()
      .result as Found;
    assert.ok(p1.nextCursor);
    const removeTag = JSON.stringify({
      jsonrpc: '2.0',
      id: 21,
      method: 'tools/call',
      params: { name: 'remove_tag', arguments: {} },
    });
    assert.ok(passed(await post(gate.url, removeTag, alice)));
    // Written beside and renamed over, as a ConfigMap update or an editor does.
    await writeFile(join(dir, 'policy.next'), `${policy}  - { principal: alice, tool: remove_tag, effect: deny }\n`);
    await rename(join(dir, 'policy.next'), join(dir, 'policy.yaml'));
    const began = Date.now();
    while (refusalOf(await post(gate.url, removeTag, alice))?.code !== 'tool_not_granted') {
      assert.ok(Date.now() - began < 15_000, 'the new policy was applied');
      await new Promise((r) => setTimeout(r, 50));
    }
    const res = await post(
      gate.url,
      discover(22, { query: 'remove from the repository', limit: 1, cursor: p1.nextCursor }),
      alice,
    );
    assert.equal(res.status, 200);
    assert.equal(res.json().error?.data?.code, 'invalid_cursor');
  });

  it('with deferred mode off, answers toolgate/discover exactly as the upstream does', async () => {
    const body = discover(16, { query: 'x' });
    const direct = await post(upstream.url, body);
    const through = await post(plain.url, body, alice);
    assert.equal(through.status, direct.status);
    assert.equal(through.text, direct.text);
    assert.equal(direct.json().error?.code, -32601);
    const listed = (await post(plain.url, list(17), alice)).json().result as Found;
    assert.ok(!names(listed).includes('search_tools'));
    assert.ok(names(listed).includes('rotate_keys'), 'onDemand tools are listed as usual');
  });
});
