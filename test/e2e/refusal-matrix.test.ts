/**
 * Every refusal a tools/call can get that a test can provoke without a fault,
 * through three real clients: the v1 SDK client (2025-11-25), the v2 client in
 * legacy mode (2025-11-25) and the v2 client pinned to 2026-07-28, all in front
 * of one v2-SDK server (it speaks both eras, so the three meet the same tools).
 * Each is run against toolgate in `protocol` mode (the forms of earlier builds:
 * "before") and in the default `result` mode ("after"), and what the client API
 * hands its caller is written down: returned or threw, and the text.
 *
 * docs/refusals-by-client.md is that record; `TOOLGATE_UPDATE_GOLDEN=1`
 * rewrites it from a run, and otherwise the run must reproduce it. The checks
 * below hold either way: in result mode a refusal reaches the model as a tool
 * result naming its code, and only the step-up answers stay at the HTTP layer.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { z } from 'zod';
import { AUDIENCE, ISSUER, keyPair, sign } from '../unit/auth/fixtures.ts';
import { ApproverClient } from '../helpers/approver-client.ts';
import { listenOnLoopback, type Listening } from '../helpers/http-server.ts';
import { post, refusalOf } from '../helpers/raw.ts';
import { sha256 } from '../helpers/static-keys.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';

const AGENT_KEY = 'agent-matrix-7d2e9a4c1b6f3e8d';
const NOBODY_KEY = 'nobody-matrix-2b8f5c1e9d4a7f3c';
const ALICE_KEY = 'alice-matrix-5e1a8d3f7c2b9e6a';
const CANARY = 'canary-matrix-4f1e';
const GOLDEN = join(import.meta.dirname, '../../docs/refusals-by-client.md');

const POLICY = `version: 1
authentication:
  staticKeys: { file: keys.yaml }
  jwt: { issuer: "${ISSUER}", audience: "${AUDIENCE}", jwksFile: jwks.json }
tools:
  elevated: { securityLevel: elevated }
  write_note: { sideEffect: non_idempotent_write, idempotency: required }
grants:
  - { principal: "*", tool: echo, scopes: [tools:use], effect: allow }
  - { principal: "*", tool: elevated, scopes: [tools:use], effect: allow }
  - { principal: "*", tool: limited, scopes: [tools:use], effect: allow }
  - { principal: "*", tool: write_note, scopes: [tools:use], effect: allow }
  - { principal: "*", tool: secret, scopes: [tools:use], effect: allow }
  - { principal: agent, tool: secret, effect: deny }
  - { principal: "*", tool: sql, scopes: [tools:use], effect: allow, when: "args.region == 'eu'" }
  - { principal: "*", tool: refund, scopes: [tools:use], effect: allow }
  - { principal: "*", tool: refund, scopes: [tools:use], effect: require_approval, when: 'args.amount > 100',
      approval: { approverScope: approve } }
rateLimits:
  - { principal: "*", tool: limited, requests: 1, per: hour }
`;

const KEYS = `keys:
  - { sha256: ${sha256(AGENT_KEY)}, principal: agent, scopes: [tools:use] }
  - { sha256: ${sha256(NOBODY_KEY)}, principal: nobody, scopes: [] }
  - { sha256: ${sha256(ALICE_KEY)}, principal: alice, scopes: [approve] }
`;

/** A stateless v2-SDK server with one tool per refusal to provoke. */
async function startFixture(): Promise<Listening> {
  const text = z.object({ text: z.string() });
  const handler = toNodeHandler(
    createMcpHandler(() => {
      const server = new McpServer({ name: 'matrix', version: '1.0.0' });
      const reply = async () => ({ content: [{ type: 'text' as const, text: 'ran' }] });
      server.registerTool('echo', { description: 'Echo', inputSchema: text }, reply);
      server.registerTool('elevated', { description: 'Needs a stronger credential', inputSchema: z.object({}) }, reply);
      server.registerTool('limited', { description: 'Once an hour', inputSchema: z.object({}) }, reply);
      server.registerTool('write_note', { description: 'Writes a note', inputSchema: text }, reply);
      server.registerTool('secret', { description: 'Denied to agent', inputSchema: z.object({}) }, reply);
      server.registerTool('hidden', { description: 'Granted to nobody', inputSchema: z.object({}) }, reply);
      server.registerTool(
        'sql',
        { description: 'Only in eu', inputSchema: z.object({ region: z.string(), query: z.string() }) },
        reply,
      );
      server.registerTool(
        'refund',
        { description: 'Large ones need approval', inputSchema: z.object({ amount: z.number() }) },
        reply,
      );
      return server;
    }),
  );
  return listenOnLoopback((req, res) => void handler(req, res));
}

type ClientKind = 'v1 (2025-11-25)' | 'v2 legacy (2025-11-25)' | 'v2 (2026-07-28)';
const CLIENTS: readonly ClientKind[] = ['v1 (2025-11-25)', 'v2 legacy (2025-11-25)', 'v2 (2026-07-28)'];
type Mode = 'protocol' | 'result';

interface Case {
  readonly name: string;
  /** The registry code the refusal carries. */
  readonly code: string;
  readonly key?: string;
  readonly tool: string;
  readonly args: (n: number) => Record<string, unknown>;
  readonly headers?: Record<string, string>;
  /** Answered at the HTTP layer in result mode too, where the client acts on it (the step-up answers). */
  readonly http?: true;
  /** What has to happen before the call (a decision on the page, a first call). */
  readonly prepare?: (gate: RunningToolgate, c: Case, n: number) => Promise<void>;
  /** Calls until refused: the first may be admitted. */
  readonly repeat?: true;
}

const agent = { authorization: `Bearer ${AGENT_KEY}` };
/** A bearer token for a principal holding no scope yet: it could come back with more. */
const bearer = { token: '' };

async function denyOnPage(gate: RunningToolgate, c: Case, n: number): Promise<void> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: c.tool, arguments: c.args(n) },
  });
  const asked = refusalOf(await post(gate.url, body, { ...agent, 'mcp-protocol-version': '2025-06-18' }));
  assert.equal(asked?.code, 'approval_required');
  const page = new ApproverClient();
  const url = asked.data.url as string;
  await page.signIn(url, ALICE_KEY);
  assert.equal((await page.decide(url, 'deny')).status, 303);
}

async function firstWrite(gate: RunningToolgate, c: Case): Promise<void> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: c.tool, arguments: { text: 'first' } },
  });
  assert.equal(refusalOf(await post(gate.url, body, { ...agent, ...c.headers })), undefined);
}

const CASES: readonly Case[] = [
  { name: 'invalid arguments', code: 'invalid_arguments', tool: 'echo', args: () => ({ text: 42, extra: CANARY }) },
  {
    name: 'a member named like a property in another case',
    code: 'case_variant_key',
    tool: 'echo',
    args: () => ({ Text: CANARY }),
  },
  { name: 'a misspelt tool', code: 'unknown_tool', tool: 'ecoh', args: () => ({ text: CANARY }) },
  { name: 'a deny row', code: 'tool_not_granted', tool: 'secret', args: () => ({}) },
  { name: 'no row for the principal', code: 'tool_not_granted', tool: 'hidden', args: () => ({}) },
  {
    name: 'a condition that is false',
    code: 'tool_not_granted',
    tool: 'sql',
    args: () => ({ region: 'us', query: CANARY }),
  },
  {
    name: 'a static key without the scope (it cannot gain one)',
    code: 'tool_not_granted',
    key: NOBODY_KEY,
    tool: 'echo',
    args: () => ({ text: CANARY }),
  },
  {
    name: 'scopes would grant it to a bearer token',
    code: 'tool_not_granted',
    key: 'jwt',
    tool: 'echo',
    args: () => ({ text: CANARY }),
    http: true,
  },
  {
    name: 'a stronger credential is needed',
    code: 'credential_too_weak',
    tool: 'elevated',
    args: () => ({}),
    http: true,
  },
  { name: 'rate limited', code: 'rate_limited', tool: 'limited', args: () => ({}), repeat: true },
  {
    name: 'no idempotency key on a write that needs one',
    code: 'idempotency_key_required',
    tool: 'write_note',
    args: () => ({ text: CANARY }),
  },
  {
    name: 'an idempotency key reused with other arguments',
    code: 'idempotency_key_reused',
    tool: 'write_note',
    args: () => ({ text: CANARY }),
    headers: { 'idempotency-key': 'matrix-key' },
    prepare: firstWrite,
  },
  {
    name: 'a time budget that is not a number',
    code: 'invalid_timeout',
    tool: 'echo',
    args: () => ({ text: CANARY }),
    headers: { 'toolgate-timeout-ms': 'soon' },
  },
  {
    name: 'a time budget already spent',
    code: 'deadline_exceeded',
    tool: 'echo',
    args: () => ({ text: CANARY }),
    headers: { 'toolgate-timeout-ms': '0' },
  },
  {
    name: 'approval needed (the client takes no URL elicitation)',
    code: 'approval_required',
    tool: 'refund',
    args: (n) => ({ amount: 1000 + n }),
  },
  {
    name: 'approval denied',
    code: 'approval_denied',
    tool: 'refund',
    args: (n) => ({ amount: 5000 + n }),
    prepare: denyOnPage,
  },
];

interface Seen {
  readonly how: 'returned' | 'threw';
  /** The refusal code the caller can read: the tool result's _meta, or the error object's data. */
  readonly code: string | undefined;
  /** `isError` result, a JSON-RPC error the client raised, or an HTTP error (the JSON-RPC error only inside a string). */
  readonly form: string;
  readonly text: string;
}

async function connect(kind: ClientKind, url: string, headers: Record<string, string>): Promise<V1Client | V2Client> {
  if (kind === 'v1 (2025-11-25)') {
    const c = new V1Client({ name: 'matrix-v1', version: '1' });
    await c.connect(new V1Transport(new URL(url), { requestInit: { headers } }));
    return c;
  }
  const c = new V2Client(
    { name: 'matrix-v2', version: '2' },
    kind === 'v2 (2026-07-28)' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await c.connect(new V2Transport(new URL(url), { requestInit: { headers } }));
  return c;
}

/** Made stable across runs: approval ids, ports, request ids and waits change every time. */
function normalise(text: string): string {
  return text
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT')
    .replace(/\/approvals\/[A-Za-z0-9_-]{22}/g, '/approvals/ID')
    .replace(/"(id|approvalId)":("[^"]*"|\d+)/g, '"$1":ID')
    .replace(/Wait \d+ s/g, 'Wait N s')
    .replace(/"retryAfterMs":\d+/g, '"retryAfterMs":N')
    .replace(/\s+/g, ' ')
    .trim();
}

async function callOnce(kind: ClientKind, url: string, c: Case, n: number): Promise<Seen> {
  const client = await connect(kind, url, {
    authorization: `Bearer ${c.key === 'jwt' ? bearer.token : (c.key ?? AGENT_KEY)}`,
    ...c.headers,
  });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        const r = (await client.callTool({ name: c.tool, arguments: c.args(n) })) as {
          isError?: boolean;
          content: { text?: string }[];
          _meta?: Record<string, { code?: string } | undefined>;
        };
        if (r.isError !== true && c.repeat === true && attempt < 3) continue;
        const code = r._meta?.['io.toolgate/error']?.code;
        return {
          how: 'returned',
          code,
          form: r.isError === true ? 'isError result' : 'result',
          text: r.content.map((x) => x.text ?? '').join(' '),
        };
      } catch (err) {
        const e = err as Error & { code?: unknown; data?: { code?: string } };
        const http =
          /HTTP|Streamable/i.test(`${e.name} ${e.constructor.name} ${e.message}`) &&
          !/McpError|ProtocolError/.test(e.constructor.name);
        const code = e.data?.code ?? /"code":"([a-z_]+)"/.exec(e.message)?.[1];
        return {
          how: 'threw',
          code: http ? undefined : code,
          form: `${e.constructor.name}${http ? ' (HTTP)' : ''}`,
          text: e.message.slice(0, 160),
        };
      }
    }
  } finally {
    await client.close();
  }
}

/** Whether the caller (the model, or the client for step-up) can act on what it got. */
function usable(c: Case, seen: Seen): boolean {
  // The step-up answers are for the client: an HTTP error carrying the challenge it re-authenticates on.
  if (c.http === true)
    return seen.how === 'threw' && (seen.form.endsWith('(HTTP)') || seen.form === 'InsufficientScopeError');
  return seen.code === c.code && !seen.text.includes(CANARY);
}

function cell(seen: Seen): string {
  return seen.how === 'returned'
    ? `returned ${seen.form}${seen.code === undefined ? '' : ` \`${seen.code}\``}`
    : `threw ${seen.form}${seen.code === undefined ? '' : ` \`${seen.code}\``}`;
}

function render(results: ReadonlyMap<string, Seen>): string {
  const lines = [
    '# Refusals as each client hands them on',
    '',
    'Generated by `test/e2e/refusal-matrix.test.ts` from a run through real clients (`TOOLGATE_UPDATE_GOLDEN=1`',
    'rewrites it; the test fails when a run differs). "Before" is `TOOLGATE_TOOL_ERRORS=protocol`, the forms of',
    'earlier builds; "after" is the default. "Usable" counts the answers whose caller can act on them: a tool',
    'result or a raised JSON-RPC error naming the code, or, for the step-up answers, an HTTP error the client',
    'handles at the HTTP layer.',
    '',
  ];
  for (const mode of ['protocol', 'result'] as const) {
    const usableCount = CASES.flatMap((c) =>
      CLIENTS.map((k) => usable(c, results.get(key(mode, c, k)) as Seen)),
    ).filter(Boolean).length;
    lines.push(
      `## ${mode === 'protocol' ? 'Before' : 'After'} (\`${mode}\`): ${usableCount} of ${CASES.length * CLIENTS.length} usable`,
      '',
    );
    lines.push(`| refusal | code | ${CLIENTS.join(' | ')} |`, `|---|---|${CLIENTS.map(() => '---').join('|')}|`);
    for (const c of CASES)
      lines.push(
        `| ${c.name} | \`${c.code}\` | ${CLIENTS.map((k) => cell(results.get(key(mode, c, k)) as Seen)).join(' | ')} |`,
      );
    lines.push('');
  }
  for (const mode of ['protocol', 'result'] as const) {
    lines.push(`## What each client's caller was told, ${mode === 'protocol' ? 'before' : 'after'}`, '');
    for (const c of CASES) {
      lines.push(`- **${c.name}**`);
      for (const k of CLIENTS)
        lines.push(`  - ${k}: ${normalise((results.get(key(mode, c, k)) as Seen).text).replaceAll('|', '\\|')}`);
    }
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

const key = (mode: Mode, c: Case, k: ClientKind) => `${mode}/${c.name}/${k}`;

describe('every tools/call refusal through three real clients, before and after', () => {
  let upstream: Listening;
  let dir: string;
  const gates: Partial<Record<Mode, RunningToolgate>> = {};
  const results = new Map<string, Seen>();

  before(async () => {
    upstream = await startFixture();
    dir = await mkdtemp(join(tmpdir(), 'toolgate-matrix-'));
    await writeFile(join(dir, 'keys.yaml'), KEYS);
    await writeFile(join(dir, 'policy.yaml'), POLICY);
    const signing = await keyPair('k1');
    await writeFile(join(dir, 'jwks.json'), JSON.stringify({ keys: [signing.publicJwk] }));
    bearer.token = await sign({ key: signing, subject: 'jane', claims: { scope: 'profile' } });
    for (const mode of ['protocol', 'result'] as const) {
      gates[mode] = await startToolgate(upstream.origin, [
        '--policy-file',
        join(dir, 'policy.yaml'),
        '--tool-errors',
        mode,
        '--approval-port',
        '0',
        '--idempotency-file',
        join(dir, `${mode}.journal`),
      ]);
      await gates[mode]?.ready;
    }
    let n = 0;
    for (const mode of ['protocol', 'result'] as const) {
      const gate = gates[mode] as RunningToolgate;
      for (const c of CASES) {
        for (const k of CLIENTS) {
          n++;
          await c.prepare?.(gate, c, n);
          results.set(key(mode, c, k), await callOnce(k, gate.url, c, n));
        }
      }
    }
  });
  after(async () => {
    await Promise.all(Object.values(gates).map((g) => g?.close()));
    await upstream?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('after: each refusal reaches its caller in a form it can act on, echoing no argument', () => {
    const failed = CASES.flatMap((c) =>
      CLIENTS.filter((k) => !usable(c, results.get(key('result', c, k)) as Seen)).map(
        (k) => `${c.name} / ${k}: ${JSON.stringify(results.get(key('result', c, k)))}`,
      ),
    );
    assert.deepEqual(failed, []);
  });

  it('after: only the step-up answers are HTTP errors, and an unknown tool on 2026-07-28 is the protocol error of that era', () => {
    for (const c of CASES) {
      for (const k of CLIENTS) {
        const seen = results.get(key('result', c, k)) as Seen;
        const expected =
          c.http === true ? 'threw' : c.code === 'unknown_tool' && k === 'v2 (2026-07-28)' ? 'threw' : 'returned';
        assert.equal(seen.how, expected, `${c.name} / ${k}: ${JSON.stringify(seen)}`);
        if (c.http !== true) assert.doesNotMatch(seen.form, /HTTP/, `${c.name} / ${k}`);
        if (expected === 'returned') assert.equal(seen.form, 'isError result');
        if (c.code === 'tool_not_granted' && c.http !== true)
          assert.doesNotMatch(seen.text, /scope/i, 'no scope would help');
      }
    }
  });

  it('before: the forms of earlier builds lose most refusals to transport exceptions', () => {
    const lost = CASES.flatMap((c) => CLIENTS.map((k) => results.get(key('protocol', c, k)) as Seen)).filter((s) =>
      s.form.includes('(HTTP)'),
    );
    assert.ok(lost.length > CASES.length, `${lost.length} HTTP-level exceptions`);
  });

  it('is what docs/refusals-by-client.md records', async () => {
    const table = render(results);
    if (process.env.TOOLGATE_UPDATE_GOLDEN === '1') await writeFile(GOLDEN, table);
    assert.equal(table, await readFile(GOLDEN, 'utf8'));
  });
});
