/**
 * What real MCP clients hand their caller for each of toolgate's refusals:
 * the v1 SDK client (2025-11-25) and the v2 client (legacy era, 2025-11-25)
 * through toolgate in front of server-everything, and the v2 client pinned to
 * 2026-07-28 in front of the v2-SDK fixture. A refusal the model can fix must
 * arrive as a tool result it can read, never as a transport exception.
 *
 * The full client × refusal record, before and after, is
 * test/e2e/refusal-matrix.test.ts (docs/refusals-by-client.md).
 *
 * The MCP Inspector CLI is not driven here: @modelcontextprotocol/inspector
 * 2.12 runs a postinstall script that installs client binaries and pulls
 * native keyring modules, so it is not a devDependency.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as V2Client,
  extractWWWAuthenticateParams,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import { startEverything, type Running } from '../../bench/conformance/servers.ts';
import { stop } from '../../bench/conformance/processes.ts';
import { AUDIENCE, ISSUER, keyPair, sign } from '../unit/auth/fixtures.ts';
import { startV2Server, type V2Server } from '../helpers/mcp-v2-server.ts';
import { post } from '../helpers/raw.ts';
import { sha256 } from '../helpers/static-keys.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';

const AGENT_KEY = 'agent-5c1f0e2d9b8a7c6d5e4f';
const NOBODY_KEY = 'nobody-3a2b1c0d9e8f7a6b5c4d';
const CANARY = 'canary-6f1e-argument-value';

const policy = `
version: 1
authentication:
  staticKeys: { file: keys.yaml }
  jwt: { issuer: "${ISSUER}", audience: "${AUDIENCE}", jwksFile: jwks.json }
tools:
  get-sum: { securityLevel: elevated }
grants:
  - { principal: "*", tool: echo, scopes: ["tools:use"], effect: allow }
  - { principal: "*", tool: get-sum, scopes: ["tools:use"], effect: allow }
  - { principal: "*", tool: get-structured-content, scopes: ["tools:use"], effect: allow }
  - { principal: "*", tool: get-env, scopes: ["tools:use"], effect: allow }
  - { principal: agent, tool: get-env, effect: deny }
  - { principal: "*", tool: execute_sql, scopes: ["tools:use"], effect: allow, when: "args.region == 'eu'" }
  - { principal: agent, tool: città, effect: deny }
rateLimits:
  - { principal: bob, tool: echo, requests: 1, per: hour }
`;

const keys = `keys:
  - { sha256: ${sha256(AGENT_KEY)}, principal: agent, scopes: ["tools:use"] }
  - { sha256: ${sha256(NOBODY_KEY)}, principal: nobody, scopes: [] }
`;

interface Gates {
  readonly dir: string;
  readonly result: RunningToolgate;
  readonly protocol: RunningToolgate;
}

async function startGates(upstream: string): Promise<Gates> {
  const key = await keyPair('k1');
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-interop-'));
  await writeFile(join(dir, 'jwks.json'), JSON.stringify({ keys: [key.publicJwk] }));
  await writeFile(join(dir, 'keys.yaml'), keys);
  await writeFile(join(dir, 'policy.yaml'), policy);
  tokens.jane = await sign({ key, subject: 'jane', claims: { scope: 'profile' } });
  tokens.bob = await sign({ key, subject: 'bob', claims: { scope: 'tools:use' } });
  const file = ['--policy-file', join(dir, 'policy.yaml')];
  const result = await startToolgate(upstream, file);
  const protocol = await startToolgate(upstream, [...file, '--tool-errors', 'protocol']);
  await Promise.all([result.ready, protocol.ready]);
  return { dir, result, protocol };
}

const tokens = { jane: '', bob: '' };
const agent = { authorization: `Bearer ${AGENT_KEY}` };
const nobody = { authorization: `Bearer ${NOBODY_KEY}` };
const jane = () => ({ authorization: `Bearer ${tokens.jane}` });

interface ToolResult {
  readonly isError?: boolean;
  readonly content: readonly { type: string; text?: string }[];
  readonly structuredContent?: Record<string, unknown>;
  readonly _meta?: Record<string, unknown>;
}

const text = (r: ToolResult) => r.content.map((c) => c.text ?? '').join('\n');

async function v1(url: string, headers: Record<string, string>): Promise<V1Client> {
  const client = new V1Client({ name: 'interop-v1', version: '1' });
  await client.connect(new V1Transport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** The v2 client with its default legacy negotiation (2025-11-25), or pinned to 2026-07-28. */
async function v2(
  url: string,
  headers: Record<string, string>,
  pin?: string,
  fetchFn?: typeof fetch,
): Promise<V2Client> {
  const client = new V2Client(
    { name: 'interop-v2', version: '2' },
    pin === undefined ? {} : { versionNegotiation: { mode: { pin } } },
  );
  await client.connect(
    new V2Transport(new URL(url), { requestInit: { headers }, ...(fetchFn !== undefined && { fetch: fetchFn }) }),
  );
  return client;
}

/** A fetch that remembers the last response, for what a client does not hand on (challenge headers). */
function recordingFetch(): { fetch: typeof fetch; last: () => Response | undefined } {
  let last: Response | undefined;
  return {
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      last = res.clone();
      return res;
    },
    last: () => last,
  };
}

type AnyClient = V1Client | V2Client;
const callTool = (c: AnyClient, name: string, args: Record<string, unknown>) =>
  c.callTool({ name, arguments: args }) as Promise<ToolResult>;

/** A refusal the model reads: an isError tool result naming the code in _meta, telling what to do, echoing nothing. */
function assertRefusalResult(r: ToolResult, code: string, told: RegExp): void {
  assert.equal(r.isError, true, `${code}: a tool result with isError`);
  assert.equal((r._meta?.['io.toolgate/error'] as { code?: string } | undefined)?.code, code);
  assert.match(text(r), told);
  assert.doesNotMatch(JSON.stringify(r), new RegExp(CANARY));
}

/** Calls until the refusal comes (the first call of a rate-limited principal may be admitted). */
async function untilRefused(call: () => Promise<ToolResult>): Promise<ToolResult> {
  let r = await call();
  for (let i = 0; i < 3 && r.isError !== true; i++) r = await call();
  return r;
}

function assertModelReadable(r: ToolResult, pointer: RegExp, rule: RegExp): void {
  assert.equal(r.isError, true);
  const t = text(r);
  assert.match(t, pointer);
  assert.match(t, rule);
  assert.doesNotMatch(JSON.stringify(r), new RegExp(CANARY));
  const meta = r._meta?.['io.toolgate/error'] as { code?: string } | undefined;
  assert.equal(meta?.code, 'invalid_arguments');
}

describe('real clients through toolgate in front of server-everything (2025-11-25)', () => {
  let everything: Running;
  let gates: Gates;
  before(async () => {
    everything = await startEverything();
    gates = await startGates(`http://127.0.0.1:${everything.port}`);
  });
  after(async () => {
    await Promise.all([gates.result.close(), gates.protocol.close()]);
    await stop(everything.child);
    await rm(gates.dir, { recursive: true, force: true });
  });

  for (const [label, connect] of [
    ['v1 SDK client', (url: string, h: Record<string, string>) => v1(url, h)],
    ['v2 client', (url: string, h: Record<string, string>) => v2(url, h)],
  ] as const) {
    describe(label, () => {
      it('invalid arguments: a tool result with isError the model can read, naming the pointer and rule, never the value', async () => {
        const c = await connect(gates.result.url, agent);
        try {
          assertModelReadable(await callTool(c, 'echo', { message: 42 }), /\/message/, /wrong type/);
          const missing = await callTool(c, 'echo', {});
          assertModelReadable(missing, /the arguments object/, /missing the required property "message"/);
          assert.deepEqual((missing.structuredContent as { errors?: unknown }).errors, [
            { instancePath: '', keyword: 'required', missing: ['message'] },
          ]);
        } finally {
          await c.close();
        }
      });

      it('invalid arguments to a tool with an outputSchema: the client does not reject the error result', async () => {
        const c = await connect(gates.result.url, agent);
        try {
          const r = await callTool(c, 'get-structured-content', { location: CANARY });
          assert.equal(r.isError, true);
          assert.match(text(r), /\/location is not one of the allowed values/);
          assert.equal(r.structuredContent, undefined, 'the data would not satisfy the outputSchema; it is in _meta');
          assert.doesNotMatch(JSON.stringify(r), new RegExp(CANARY));
        } finally {
          await c.close();
        }
      });

      it('with TOOLGATE_TOOL_ERRORS=protocol the old form comes back: the client raises an exception', async () => {
        const c = await connect(gates.protocol.url, agent);
        try {
          await assert.rejects(callTool(c, 'echo', { message: 42 }), (e: Error) =>
            /invalid_arguments|-32602|400/.test(`${e.message} ${String((e as { code?: unknown }).code)}`),
          );
        } finally {
          await c.close();
        }
      });

      it('a misspelt tool is unknown_tool, not a scope question: a tool result with HTTP 200, as the SDK servers of 2025 answer', async () => {
        const c = await connect(gates.result.url, agent);
        try {
          const r = await callTool(c, 'no-such-tool', { message: CANARY });
          assertRefusalResult(r, 'unknown_tool', /no tool of this name exists/);
          assert.doesNotMatch(text(r), /scope/i);
        } finally {
          await c.close();
        }
      });

      it('a denied tool, and a principal with no grant at all: a tool result that never says to request scopes', async () => {
        for (const [who, tool] of [
          [agent, 'get-env'],
          [agent, 'get-tiny-image'],
        ] as const) {
          const c = await connect(gates.result.url, who);
          try {
            const r = await callTool(c, tool, { message: CANARY });
            assertRefusalResult(r, 'tool_not_granted', /not granted this tool/);
            assert.doesNotMatch(text(r), /scope/i);
          } finally {
            await c.close();
          }
        }
      });

      it('rate limited: a tool result with the wait in the text and retryAfterMs in the data', async () => {
        const c = await connect(gates.result.url, { authorization: `Bearer ${tokens.bob}` });
        try {
          const r = await untilRefused(() => callTool(c, 'echo', { message: CANARY }));
          assertRefusalResult(r, 'rate_limited', /Wait \d+ s/);
          assert.ok(((r._meta?.['io.toolgate/error'] as { retryAfterMs?: number } | undefined)?.retryAfterMs ?? 0) > 0);
        } finally {
          await c.close();
        }
      });

      it('no grant at all: an empty tool list, not a failure', async () => {
        const c = await connect(gates.result.url, nobody);
        try {
          assert.deepEqual((await c.listTools()).tools, []);
        } finally {
          await c.close();
        }
      });

      it('a static key never sees a tool it can never call, and a call to it carries the RFC 9470 challenge', async () => {
        const c = await connect(gates.result.url, agent);
        try {
          const names = (await c.listTools()).tools.map((t) => t.name).sort();
          assert.deepEqual(names, ['echo', 'get-structured-content']);
          await assert.rejects(callTool(c, 'get-sum', { a: 1, b: 2 }), (e: Error) =>
            /credential_too_weak|stronger credential/.test(
              `${e.message} ${JSON.stringify((e as { text?: unknown }).text ?? '')}`,
            ),
          );
        } finally {
          await c.close();
        }
      });
    });
  }

  it('the v2 client parses the step-up challenge of a too-weak credential', async () => {
    const rec = recordingFetch();
    const c = await v2(gates.result.url, agent, undefined, rec.fetch);
    try {
      await assert.rejects(callTool(c, 'get-sum', { a: 1, b: 2 }));
      const res = rec.last();
      assert.equal(res?.status, 403);
      assert.equal(extractWWWAuthenticateParams(res).error, 'insufficient_user_authentication');
    } finally {
      await c.close();
    }
  });

  it('a bearer token that scopes would help: 403 insufficient_scope naming them, and a message that no tool is granted yet', async () => {
    const rec = recordingFetch();
    const c = await v2(gates.result.url, jane(), undefined, rec.fetch);
    try {
      await assert.rejects(c.listTools());
      const res = rec.last() as Response;
      assert.equal(res.status, 403);
      const challenge = extractWWWAuthenticateParams(res);
      assert.equal(challenge.error, 'insufficient_scope');
      assert.equal(challenge.scope, 'tools:use');
      const body = (await res.json()) as { error: { message: string; data: { code: string } } };
      assert.equal(body.error.data.code, 'no_tool_granted');
      assert.match(body.error.message, /No tool is granted/);
      assert.doesNotMatch(body.error.message, /echo|get-/);
    } finally {
      await c.close();
    }
  });

  it('a bearer token lists the elevated tool it can step up to, and calls it', async () => {
    const c = await v1(gates.result.url, { authorization: `Bearer ${tokens.bob}` });
    try {
      assert.ok((await c.listTools()).tools.some((t) => t.name === 'get-sum'));
      const r = await callTool(c, 'get-sum', { a: 1, b: 2 });
      assert.notEqual(r.isError, true);
    } finally {
      await c.close();
    }
  });

  it('2025-06-18 and older keep the JSON-RPC error for invalid arguments, in a 200 answer clients read', async () => {
    const res = await post(
      gates.result.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo', arguments: { message: CANARY.length } },
      }),
      {
        ...agent,
        'mcp-protocol-version': '2025-06-18',
      },
    );
    assert.equal(res.status, 200);
    const body = JSON.parse(res.text) as { error: { code: number; data: { code: string } } };
    assert.equal(body.error.code, -32602);
    assert.equal(body.error.data.code, 'invalid_arguments');
  });
});

describe('the v2 client on 2026-07-28 through toolgate in front of the v2-SDK fixture', () => {
  let upstream: V2Server;
  let gates: Gates;
  before(async () => {
    upstream = await startV2Server();
    gates = await startGates(upstream.origin);
  });
  after(async () => {
    await Promise.all([gates.result.close(), gates.protocol.close()]);
    await upstream.close();
    await rm(gates.dir, { recursive: true, force: true });
  });

  it('invalid arguments: a tool result with isError, not a ProtocolError', async () => {
    const c = await v2(gates.result.url, agent, '2026-07-28');
    try {
      const r = await callTool(c, 'echo', { text: 42, extra: CANARY });
      assert.equal(r.isError, true);
      assert.match(text(r), /argument \/text has the wrong type/);
      assert.doesNotMatch(JSON.stringify(r), new RegExp(`${CANARY}|"extra"`));
      assert.equal((r._meta?.['io.toolgate/error'] as { code?: string } | undefined)?.code, 'invalid_arguments');
    } finally {
      await c.close();
    }
  });

  it('a misspelt tool is unknown_tool: the JSON-RPC error of 2026-07-28, in a 200 answer the client raises as a protocol error', async () => {
    const c = await v2(gates.result.url, agent, '2026-07-28');
    try {
      await assert.rejects(
        callTool(c, 'ecoh', { text: 'x' }),
        (e: Error) => /No tool of this name exists|unknown_tool/.test(e.message) && !/HTTP|40\d/.test(e.name),
      );
    } finally {
      await c.close();
    }
  });

  it('not granted, a condition that is false and rate limited: tool results the model reads; scopes that would help: the HTTP challenge', async () => {
    const c = await v2(gates.result.url, agent, '2026-07-28');
    try {
      assertRefusalResult(await callTool(c, 'città', {}), 'tool_not_granted', /not granted this tool/);
      const condition = await callTool(c, 'execute_sql', { region: 'us', query: CANARY });
      assertRefusalResult(condition, 'tool_not_granted', /condition on this caller's grant/);
      assert.doesNotMatch(text(condition), /scope/i);
    } finally {
      await c.close();
    }
    // Scopes would grant it to a bearer token: the step-up answer stays at the HTTP layer, where the client acts on it.
    const none = await v2(gates.result.url, jane(), '2026-07-28');
    try {
      await assert.rejects(callTool(none, 'echo', { text: CANARY }), (e: Error) => /scope/i.test(e.message));
    } finally {
      await none.close();
    }
    const bob = await v2(gates.result.url, { authorization: `Bearer ${tokens.bob}` }, '2026-07-28');
    try {
      assertRefusalResult(
        await untilRefused(() => callTool(bob, 'echo', { text: CANARY })),
        'rate_limited',
        /Wait \d+ s/,
      );
    } finally {
      await bob.close();
    }
  });

  it('with TOOLGATE_TOOL_ERRORS=protocol, the client raises the JSON-RPC error', async () => {
    const c = await v2(gates.protocol.url, agent, '2026-07-28');
    try {
      await assert.rejects(callTool(c, 'echo', { text: 42 }));
    } finally {
      await c.close();
    }
  });
});
