import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AUDIENCE, ISSUER, keyPair, sign } from '../unit/auth/fixtures.ts';
import { POLICY_TOOLS, type PolicyServer } from '../helpers/mcp-policy-server.ts';
import { startPolicyGate, type PolicyGate } from '../helpers/policy-gate.ts';
import { post, refusalOf, refusedCall } from '../helpers/raw.ts';
import type { RunningToolgate } from '../helpers/toolgate.ts';
import { sha256 } from '../helpers/static-keys.ts';

const CANARY = 'canary-91c2-secret-value';
const ALICE_KEY = 'alice-0f3e9a7c5b1d2e4f6a8b';
const CAROL_KEY = 'carol-7d1c3b5a9e2f4d6c8b0a';
const RESOURCE_METADATA = 'https://mcp.test/.well-known/oauth-protected-resource/mcp';

const policy = `
version: 1
authentication:
  resourceMetadataUrl: ${RESOURCE_METADATA}
  staticKeys: { file: keys.yaml }
  jwt: { issuer: "${ISSUER}", audience: "${AUDIENCE}", jwksFile: jwks.json }
tools:
  rotate_keys: { securityLevel: elevated }
schemas:
  "https://schemas.example.com/code.json": { type: string, pattern: "^[A-Z]{3}$" }
grants:
  - { principal: "*", tool: search_docs, scopes: ["docs:read"], effect: allow }
  - { principal: "*", tool: delete_repo, scopes: ["repo:admin"], effect: allow }
  - { principal: alice, tool: delete_repo, effect: deny }
  - { principal: "*", tool: rotate_keys, scopes: ["docs:read"], effect: allow }
  - { principal: "*", tool: weird_schema, scopes: ["docs:read"], effect: allow }
  - { principal: "*", tool: late_tool, scopes: ["docs:read"], effect: allow }
  - { principal: "*", tool: ghost, scopes: ["docs:read"], effect: allow }
  - { principal: alice, tool: shared_ref, effect: allow }
`;

const call = (id: number, name: string, args: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

describe('policy enforcement with a real MCP server, static keys and JWTs', () => {
  let setup: PolicyGate;
  let upstream: PolicyServer;
  let gate: RunningToolgate;
  let bobToken: string;
  let daveToken: string;
  const alice = { authorization: `Bearer ${ALICE_KEY}` };
  const carol = { authorization: `Bearer ${CAROL_KEY}` };
  const bob = () => ({ authorization: `Bearer ${bobToken}` });

  before(async () => {
    const key = await keyPair('k1');
    bobToken = await sign({ key, subject: 'bob', claims: { scope: 'docs:read repo:admin' } });
    daveToken = await sign({ key, subject: 'dave', claims: { scope: 'profile' } });
    setup = await startPolicyGate({
      'jwks.json': JSON.stringify({ keys: [key.publicJwk] }),
      'keys.yaml': `keys:\n  - { sha256: ${sha256(ALICE_KEY)}, principal: alice, scopes: ["docs:read"] }\n  - { sha256: ${sha256(CAROL_KEY)}, principal: carol, scopes: [] }\n`,
      'policy.yaml': policy,
    });
    ({ upstream, gate } = setup);
  });
  after(() => setup.close());

  async function listAs(headers: Record<string, string>): Promise<string[]> {
    const client = new Client({ name: 'it', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(gate.url), { requestInit: { headers } }));
    try {
      return (await client.listTools()).tools.map((t) => t.name);
    } finally {
      await client.close();
    }
  }

  it('shows each principal only the tools it may call (key vs JWT)', async () => {
    // rotate_keys is elevated: alice's static key can never meet it, so it is not offered to her.
    assert.deepEqual(await listAs(alice), ['search_docs', 'shared_ref', 'weird_schema']);
    assert.deepEqual(await listAs(bob()), ['search_docs', 'delete_repo', 'rotate_keys', 'weird_schema']);
  });

  it('serves schemas exactly as the upstream wrote them and marks the list private', async () => {
    const res = await post(gate.url, '{"jsonrpc":"2.0","id":3,"method":"tools/list"}', alice);
    assert.equal(res.status, 200);
    const result = res.json().result as { tools: unknown[]; cacheScope: string };
    assert.equal(result.cacheScope, 'private');
    assert.deepEqual(result.tools[0], POLICY_TOOLS[0]);
  });

  it('forwards an allowed call with its arguments byte-identical and without the credential', async () => {
    const body = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search_docs","arguments":{ "query" : "héllo",\n"filters":{"lang":"en"}}}}`;
    const res = await post(gate.url, body, alice);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual((res.json().result as { content: unknown }).content, [
      { type: 'text', text: 'called search_docs' },
    ]);
    const seen = upstream.calls.at(-1);
    assert.equal(seen?.body, body, 'defaults were not applied, nothing was re-serialised');
    assert.ok(
      upstream.allHeaders.every((h) => h.authorization === undefined),
      'no credential reached the upstream',
    );
  });

  it('denies an explicit deny even though a wildcard row would allow', async () => {
    const res = await post(gate.url, call(5, 'delete_repo', { repo: 'a/b' }), alice);
    refusedCall(res, 'tool_not_granted');
    assert.doesNotMatch(refusalOf(res)?.text ?? '', /scope/i, 'no scope can lift an explicit deny');
    assert.equal(res.headers['www-authenticate'], undefined, 'no scope can lift an explicit deny');
  });

  it('refuses a tools/call sent as a notification (no id), which a generic JSON-RPC server would run unchecked', async () => {
    const before = upstream.calls.length;
    const res = await post(
      gate.url,
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'tools/call',
        params: { name: 'delete_repo', arguments: { repo: CANARY } },
      }),
      alice,
    );
    assert.equal(res.status, 400);
    assert.equal(res.json().error?.data?.code, 'invalid_request');
    assert.ok(!res.text.includes(CANARY));
    assert.equal(upstream.calls.length, before);
  });

  it('tells a static key without the scope it is not granted, naming no scope: a key cannot gain one', async () => {
    const res = await post(gate.url, call(6, 'search_docs', { query: CANARY }), carol);
    const data = refusedCall(res, 'tool_not_granted');
    assert.equal(data.requiredScopes, undefined);
    assert.equal(data.hint, 'contact_operator');
    assert.doesNotMatch(refusalOf(res)?.text ?? '', /scope/i);
    assert.equal(res.headers['www-authenticate'], undefined);
    assert.ok(!res.text.includes(CANARY));
  });

  it('challenges a bearer token for the scopes that would grant a tool', async () => {
    const res = await post(gate.url, call(6, 'search_docs', { query: CANARY }), {
      authorization: `Bearer ${daveToken}`,
    });
    assert.equal(res.status, 403);
    assert.equal(res.json().error?.code, -31403);
    assert.deepEqual(res.json().error?.data?.requiredScopes, ['docs:read']);
    assert.equal(
      res.headers['www-authenticate'],
      `Bearer error="insufficient_scope", scope="docs:read", resource_metadata="${RESOURCE_METADATA}"`,
    );
    assert.ok(!res.text.includes(CANARY));
  });

  it('answers a static key that may see nothing with an empty private list: it cannot gain scopes', async () => {
    const res = await post(gate.url, '{"jsonrpc":"2.0","id":7,"method":"tools/list"}', carol);
    assert.equal(res.status, 200);
    assert.deepEqual(res.json().result, { tools: [], cacheScope: 'private' });
    assert.equal(res.headers['www-authenticate'], undefined);
  });

  it('answers a bearer token that may see nothing, but could with scopes, with 403 no_tool_granted and the scope challenge', async () => {
    const key = await keyPair('k2');
    // Signed by a key the gate does not trust: only to prove a bad token is still a 401, not a listing.
    const stranger = await sign({ key, subject: 'dave', claims: { scope: 'profile' } });
    assert.equal(
      (await post(gate.url, '{"jsonrpc":"2.0","id":7,"method":"tools/list"}', { authorization: `Bearer ${stranger}` }))
        .status,
      401,
    );
    const res = await post(gate.url, '{"jsonrpc":"2.0","id":7,"method":"tools/list"}', {
      authorization: `Bearer ${daveToken}`,
    });
    assert.equal(res.status, 403);
    assert.equal(res.json().error?.data?.code, 'no_tool_granted');
    assert.match(String(res.json().error?.message), /No tool is granted/);
    assert.match(String(res.headers['www-authenticate']), /error="insufficient_scope", scope="docs:read"/);
    for (const tool of ['search_docs', 'rotate_keys', 'delete_repo', 'weird_schema'])
      assert.ok(!res.text.includes(tool));
  });

  it('refuses invalid arguments with pointers and keywords, never values', async () => {
    const res = await post(
      gate.url,
      call(8, 'search_docs', { query: CANARY, limit: 500, filters: { lang: CANARY }, extra: CANARY }),
      alice,
    );
    // Before 2025-11-25 (no version header means 2025-03-26) argument errors stay JSON-RPC errors, at HTTP 200.
    assert.equal(res.status, 200);
    const err = res.json().error;
    assert.equal(err?.code, -32602);
    assert.equal(err?.data?.code, 'invalid_arguments');
    const errors = err?.data?.errors as { instancePath: string; keyword: string }[];
    assert.ok(
      errors.some((e) => e.instancePath === '/limit' && e.keyword === 'maximum'),
      JSON.stringify(errors),
    );
    assert.ok(
      errors.some((e) => e.instancePath === '/filters/lang' && e.keyword === 'pattern'),
      JSON.stringify(errors),
    );
    assert.ok(
      errors.some((e) => e.keyword === 'additionalProperties'),
      JSON.stringify(errors),
    );
    assert.ok(!res.text.includes(CANARY));
  });

  it('on 2025-11-25 answers invalid arguments as a tool result the model reads, counted as a refusal', async () => {
    const before = upstream.calls.length;
    const res = await post(gate.url, call(22, 'search_docs', { limit: 500, extra: CANARY }), {
      ...alice,
      'mcp-protocol-version': '2025-11-25',
    });
    assert.equal(res.status, 200);
    const result = res.json().result as {
      isError: boolean;
      content: { text: string }[];
      structuredContent: { code: string; errors: unknown[] };
      _meta: Record<string, { code: string }>;
    };
    assert.equal(result.isError, true);
    assert.match(result.content[0]?.text ?? '', /missing the required property "query"/);
    assert.match(result.content[0]?.text ?? '', /argument \/limit is above the allowed range/);
    assert.match(result.content[0]?.text ?? '', /has 1 property the schema does not allow/);
    assert.equal(result.structuredContent.code, 'invalid_arguments');
    assert.deepEqual(
      result.structuredContent.errors.find((e) => (e as { keyword: string }).keyword === 'required'),
      { instancePath: '', keyword: 'required', missing: ['query'] },
    );
    assert.equal(result._meta['io.toolgate/error']?.code, 'invalid_arguments');
    assert.ok(!res.text.includes(CANARY) && !res.text.includes('"extra"'));
    assert.equal(upstream.calls.length, before);
    const metrics = await (await fetch(`${gate.adminUrl}/metrics`)).text();
    assert.match(metrics, /toolgate_requests_total\{method="tools\/call",outcome="invalid_arguments"\} [1-9]/);
  });

  it('refuses an integer too long to check exactly where the schema compares values, and forwards it where none does', async () => {
    const digits = '900719925474099312';
    const before = upstream.calls.length;
    const body = `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"search_docs","arguments":{"query":"q","limit":${digits}}}}`;
    const res = await post(gate.url, body, alice);
    assert.equal(res.status, 200);
    const err = res.json().error;
    assert.equal(err?.code, -32602);
    assert.equal(err?.data?.code, 'inexact_number');
    assert.deepEqual(err?.data?.errors, [{ instancePath: '/limit', keyword: 'precision' }]);
    assert.ok(!res.text.includes(digits) && !res.text.includes('9007199254740993'));
    assert.equal(upstream.calls.length, before, 'nothing was forwarded');

    // rotate_keys compares no values: the digits reach the server as sent.
    const id = `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"rotate_keys","arguments":{"keyId":${digits}}}}`;
    const passed = await post(gate.url, id, bob());
    assert.equal(passed.status, 200, passed.text);
    assert.equal(upstream.calls.at(-1)?.body, id);
  });

  it('refuses an argument named like a declared property in another letter case, which a Go server would read as it', async () => {
    const before = upstream.calls.length;
    const res = await post(gate.url, call(14, 'search_docs', { query: 'q', filters: { Lang: CANARY } }), alice);
    assert.equal(res.status, 200);
    const err = res.json().error;
    assert.equal(err?.code, -32600);
    assert.equal(err?.data?.code, 'case_variant_key');
    assert.deepEqual(err?.data?.errors, [{ instancePath: '/filters/Lang', keyword: 'properties' }]);
    assert.ok(!res.text.includes(CANARY));
    assert.equal(upstream.calls.length, before, 'nothing was forwarded');
  });

  it('asks for a stronger credential on an elevated tool', async () => {
    const weak = await post(gate.url, call(9, 'rotate_keys', {}), alice);
    assert.equal(weak.status, 403);
    assert.equal(weak.json().error?.data?.code, 'credential_too_weak');
    assert.equal(
      weak.headers['www-authenticate'],
      `Bearer error="insufficient_user_authentication", error_description="A stronger authentication is required for this tool", resource_metadata="${RESOURCE_METADATA}"`,
    );
    const strong = await post(gate.url, call(10, 'rotate_keys', {}), bob());
    assert.equal(strong.status, 200, strong.text);
  });

  it('enforces a schema that references a schema registered in the policy, never fetching it', async () => {
    assert.equal((await post(gate.url, call(20, 'shared_ref', { code: 'ABC' }), alice)).status, 200);
    const bad = await post(gate.url, call(21, 'shared_ref', { code: 'abcd' }), alice);
    assert.equal(bad.status, 200);
    assert.deepEqual(bad.json().error?.data?.errors, [{ instancePath: '/code', keyword: 'pattern' }]);
  });

  it('refuses calls to a tool whose schema it cannot enforce', async () => {
    const res = await post(gate.url, call(11, 'weird_schema', { x: CANARY }), alice);
    refusedCall(res, 'tool_validation_unavailable');
    assert.ok(!res.text.includes(CANARY) && !res.text.includes('schemas.example.com'));
  });

  it('reports the catalogue and its unenforceable schemas as gauges', async () => {
    const text = await (await fetch(`${gate.adminUrl}/metrics`)).text();
    assert.match(text, /^toolgate_catalogue_unenforceable_tools 1$/m);
    assert.match(text, /^toolgate_catalogue_tools [56]$/m);
  });

  it('checks a tool the caller never saw listed: refreshes the catalogue once, then knows it', async () => {
    upstream.extraTools.push({
      name: 'late_tool',
      inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false },
    });
    const ok = await post(gate.url, call(12, 'late_tool', { n: 1 }), alice);
    assert.equal(ok.status, 200, ok.text);
    const bad = await post(gate.url, call(13, 'late_tool', { n: 'one' }), alice);
    assert.equal(bad.json().error?.data?.code, 'invalid_arguments');
  });

  it('answers a granted tool the server does not have with unknown_tool', async () => {
    const res = await post(gate.url, call(14, 'ghost', {}), alice);
    refusedCall(res, 'unknown_tool');
  });

  it('answers a misspelt tool with unknown_tool for every caller, before grants', async () => {
    for (const who of [alice, carol, bob()]) {
      const res = await post(gate.url, call(21, 'serch_docs', { query: CANARY }), who);
      refusedCall(res, 'unknown_tool');
      assert.ok(!res.text.includes(CANARY));
    }
  });

  it('requires a credential on the MCP endpoint, with a resource_metadata challenge', async () => {
    const none = await post(gate.url, call(15, 'search_docs', { query: 'x' }));
    assert.equal(none.status, 401);
    assert.equal(none.json().error?.data?.code, 'unauthenticated');
    assert.equal(none.headers['www-authenticate'], `Bearer resource_metadata="${RESOURCE_METADATA}"`);
    const bad = await post(gate.url, call(16, 'search_docs', { query: 'x' }), { authorization: `Bearer ${CANARY}` });
    assert.equal(bad.status, 401);
    assert.match(String(bad.headers['www-authenticate']), /error="invalid_token"/);
    assert.ok(!bad.text.includes(CANARY));
  });
});

describe('TOOLGATE_HIDE_UNGRANTED: an ungranted tool is answered as one that does not exist', () => {
  let setup: PolicyGate;
  before(async () => {
    setup = await startPolicyGate(
      {
        'keys.yaml': `keys:\n  - { sha256: ${sha256(ALICE_KEY)}, principal: alice, scopes: ["docs:read"] }\n`,
        'policy.yaml': `
version: 1
authentication:
  staticKeys: { file: keys.yaml }
grants:
  - { principal: "*", tool: search_docs, scopes: ["docs:read"], effect: allow }
  - { principal: alice, tool: delete_repo, effect: deny }
`,
      },
      ['--hide-ungranted', 'true'],
    );
  });
  after(() => setup.close());

  it('denied, ungranted and missing tools get the same unknown_tool answer', async () => {
    const alice = { authorization: `Bearer ${ALICE_KEY}` };
    const bodies = [];
    for (const tool of ['delete_repo', 'weird_schema', 'no_such_tool']) {
      const res = await post(setup.gate.url, call(1, tool, {}), alice);
      refusedCall(res, 'unknown_tool');
      assert.equal(res.headers['www-authenticate'], undefined);
      bodies.push(res.text);
    }
    assert.equal(new Set(bodies).size, 1);
    assert.equal((await post(setup.gate.url, call(2, 'search_docs', { query: 'q' }), alice)).status, 200);
  });
});
