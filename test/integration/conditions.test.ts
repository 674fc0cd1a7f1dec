import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InMemorySpanExporter, BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { subscribeTracing, type Tracing } from '../../src/telemetry/tracing.ts';
import { AUDIENCE, ISSUER, keyPair, sign } from '../unit/auth/fixtures.ts';
import { startPolicyServer } from '../helpers/mcp-policy-server.ts';
import { metricValue } from '../helpers/metrics.ts';
import { startGateWith, type PolicyGate } from '../helpers/policy-gate.ts';
import { post, refusalOf, refusedCall } from '../helpers/raw.ts';
import { sha256 } from '../helpers/static-keys.ts';
import { waitFor } from '../helpers/wait.ts';
import { startToolgate } from '../helpers/toolgate.ts';
import { setLogLevel } from '../../src/telemetry/log.ts';

const ALICE_KEY = 'alice-0f3e9a7c5b1d2e4f6a8b';
const CANARY = 'canary-4411-argument-value';

const TOOLS: Tool[] = [
  {
    name: 'refund',
    inputSchema: {
      type: 'object',
      properties: { amount: { type: 'number' }, order: { type: 'string' } },
      required: ['amount'],
    },
  },
  {
    name: 'send_email',
    inputSchema: { type: 'object', properties: { to: { type: 'string' }, body: { type: 'string' } }, required: ['to'] },
  },
  { name: 'read_file', inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { name: 'run_query', inputSchema: { type: 'object', properties: { target: {} } } },
  { name: 'export_all', inputSchema: { type: 'object', properties: {} } },
];

const grants = (shadow: string) => `
grants:
  - { principal: "*", tool: refund, scopes: [pay], effect: allow, when: "args.amount <= 100", name: small-refunds }
  - { principal: "*", tool: send_email, scopes: [mail], effect: allow, when: 'args.to.endsWith("@example.com")' }
  - { principal: "*", tool: read_file, scopes: [docs], effect: allow }
  - { principal: "*", tool: read_file, scopes: [docs], effect: deny, when: '!args.path.startsWith("/srv/docs/") || args.path.contains("..")' }
  - { principal: "*", tool: run_query, scopes: [docs], effect: allow, when: 'args.target.startsWith("replica")' }
  - { principal: "*", tool: export_all, scopes: [docs], effect: allow, when: 'principal.claims.department == "finance"'${shadow} }
`;

const policy = (extra = '') => `
version: 1
authentication:
  staticKeys: { file: keys.yaml }
  jwt: { issuer: "${ISSUER}", audience: "${AUDIENCE}", jwksFile: jwks.json }
${extra}
${grants('')}`;

const call = (id: number, name: string, args: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

async function withTools() {
  const s = await startPolicyServer();
  s.extraTools.push(...TOOLS);
  return s;
}

describe('grant conditions through a real toolgate and a real MCP server', () => {
  let setup: PolicyGate;
  let financeToken: string;
  let salesToken: string;
  const alice = { authorization: `Bearer ${ALICE_KEY}` };

  before(async () => {
    const key = await keyPair('k1');
    financeToken = await sign({ key, subject: 'fin-bot', claims: { scope: 'docs', department: 'finance' } });
    salesToken = await sign({ key, subject: 'sales-bot', claims: { scope: 'docs', department: 'sales' } });
    setup = await startGateWith(withTools, {
      'jwks.json': JSON.stringify({ keys: [key.publicJwk] }),
      'keys.yaml': `keys:\n  - { sha256: ${sha256(ALICE_KEY)}, principal: alice, scopes: [pay, mail, docs] }\n`,
      'policy.yaml': policy(),
    });
  });
  after(() => setup.close());

  async function expectAllowed(name: string, args: unknown, headers = alice) {
    const before = setup.upstream.calls.length;
    const res = await post(setup.gate.url, call(1, name, args), headers);
    assert.equal(res.status, 200, res.text);
    assert.equal(refusalOf(res), undefined, res.text);
    assert.equal(setup.upstream.calls.length, before + 1, 'reached the upstream');
  }

  async function expectRefused(name: string, args: unknown, reason: string, headers = alice) {
    const before = setup.upstream.calls.length;
    const res = await post(setup.gate.url, call(2, name, args), headers);
    const data = refusedCall(res, 'tool_not_granted');
    assert.equal(data.reason, reason);
    assert.doesNotMatch(refusalOf(res)?.text ?? '', /scope/i, 'no scope would help a condition');
    assert.ok(!res.text.includes(CANARY), 'no argument value echoed');
    assert.ok(!res.text.includes('args.'), 'no expression echoed');
    assert.equal(setup.upstream.calls.length, before, 'nothing reached the upstream');
  }

  it('a refund limit: up to 100 passes, more is refused by the condition', async () => {
    await expectAllowed('refund', { amount: 100, order: 'o-1' });
    await expectAllowed('refund', { amount: 12.5 });
    await expectRefused('refund', { amount: 101, order: CANARY }, 'condition');
    assert.equal(
      await metricValue(setup.gate.adminUrl, 'toolgate_decisions_total', {
        stage: 'conditions',
        outcome: 'tool_not_granted',
        mode: 'enforce',
        rule: 'small-refunds',
      }),
      1,
    );
    assert.equal(
      await metricValue(setup.gate.adminUrl, 'toolgate_decisions_total', {
        stage: 'conditions',
        outcome: 'allow',
        mode: 'enforce',
        rule: 'small-refunds',
      }),
      2,
    );
  });

  it('a domain rule: only addresses at example.com', async () => {
    await expectAllowed('send_email', { to: 'ops@example.com' });
    await expectRefused('send_email', { to: `${CANARY}@evil.test` }, 'condition');
  });

  it('a path rule: a conditional deny row refuses paths outside /srv/docs', async () => {
    await expectAllowed('read_file', { path: '/srv/docs/guide.md' });
    await expectRefused('read_file', { path: '/etc/passwd' }, 'condition');
    await expectRefused('read_file', { path: '/srv/docs/../../etc/shadow' }, 'condition');
  });

  it('arguments are validated before a condition reads them', async () => {
    const before = setup.upstream.calls.length;
    const res = await post(setup.gate.url, call(3, 'refund', { order: CANARY }), alice);
    assert.equal(res.status, 200);
    assert.equal(res.json().error?.data?.code, 'invalid_arguments', 'a JSON-RPC error before 2025-11-25');
    assert.ok(!res.text.includes(CANARY));
    assert.equal(setup.upstream.calls.length, before);
  });

  it('a condition that errors at run time denies with condition_error', async () => {
    await expectAllowed('run_query', { target: 'replica-1' });
    await expectRefused('run_query', { target: 42 }, 'condition_error');
    await expectRefused('run_query', {}, 'condition_error');
  });

  it('a condition on a claim of a real JWT', async () => {
    await expectAllowed('export_all', {}, { authorization: `Bearer ${financeToken}` });
    await expectRefused('export_all', {}, 'condition', { authorization: `Bearer ${salesToken}` });
  });

  it('tools/list shows a tool some row could allow', async () => {
    const res = await post(setup.gate.url, '{"jsonrpc":"2.0","id":9,"method":"tools/list"}', alice);
    const names = new Set((res.json().result as { tools: { name: string }[] }).tools.map((t) => t.name));
    for (const n of ['refund', 'send_email', 'read_file', 'run_query', 'export_all']) assert.ok(names.has(n), n);
  });

  it('a reload whose condition does not compile is refused and the last good policy stays', async () => {
    const bad = policy().replace('args.amount <= 100', "args.amount <= 'a' + 1");
    const lines: Record<string, unknown>[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = (chunk: string | Uint8Array) => {
      for (const line of String(chunk).split('\n'))
        if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
      return true;
    };
    setLogLevel('warn');
    try {
      await writeFile(join(setup.dir, 'policy.yaml'), bad);
      await waitFor(
        async () =>
          (await metricValue(setup.gate.adminUrl, 'toolgate_policy_reloads_total', { outcome: 'rejected' })) >= 1,
        'the reload is rejected',
      );
    } finally {
      process.stderr.write = original;
      setLogLevel('error');
    }
    const warn = lines.find((l) => l.msg === 'policy reload rejected; the last good policy stays in force');
    assert.equal(warn?.error_path, '/grants/0/when');
    assert.match(
      String(warn?.error_rule),
      /^condition: no matching overload for '\+' applied to \(string, int\) at line 1, column \d+$/,
    );
    await expectAllowed('refund', { amount: 50 });
    await expectRefused('refund', { amount: 500 }, 'condition');
  });
});

describe('a policy whose condition does not compile', () => {
  it('is refused at start, naming the rule path and the position', async () => {
    const up = await withTools();
    try {
      const d = await mkdtemp(join(tmpdir(), 'toolgate-cond-'));
      await writeFile(
        join(d, 'policy.yaml'),
        `version: 1\ngrants:\n  - { principal: "*", tool: refund, effect: allow, when: "args.amount <=" }\n  - { principal: "*", tool: refund, effect: allow, when: "principal.nmae == 'x'" }\n`,
      );
      await assert.rejects(startToolgate(up.origin, ['--policy-file', join(d, 'policy.yaml')]), (e: Error) => {
        assert.match(e.message, /\/grants\/0\/when: condition: syntax error near '<' at line 1, column 13/);
        return true;
      });
    } finally {
      await up.close();
    }
  });
});

describe('shadow mode: enforcement audit', () => {
  let tracing: Tracing | undefined;
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const alice = { authorization: `Bearer ${ALICE_KEY}` };
  after(async () => {
    tracing?.dispose();
    await provider.shutdown();
  });

  it('forwards a call enforce mode refuses and records that it would have been refused', async () => {
    const up = await withTools();
    const dir = await mkdtemp(join(tmpdir(), 'toolgate-shadow-'));
    await writeFile(
      join(dir, 'keys.yaml'),
      `keys:\n  - { sha256: ${sha256(ALICE_KEY)}, principal: alice, scopes: [pay] }\n`,
    );
    await writeFile(
      join(dir, 'policy.yaml'),
      `version: 1\nenforcement: audit\nauthentication:\n  staticKeys: { file: keys.yaml }\n${grants('')}`,
    );
    const gate = await startToolgate(up.origin, [
      '--policy-file',
      join(dir, 'policy.yaml'),
      '--audit-log',
      join(dir, 'audit.log'),
    ]);
    await gate.ready;
    tracing = subscribeTracing({ tracer: provider.getTracer('test'), upstream: new URL(up.origin), mcpPath: '/mcp' });
    try {
      const before = up.calls.length;
      const res = await post(gate.url, call(21, 'refund', { amount: 5000, order: CANARY }), alice);
      assert.equal(res.status, 200, res.text);
      assert.equal(up.calls.length, before + 1, 'the upstream ran the call');
      assert.equal(
        await metricValue(gate.adminUrl, 'toolgate_decisions_total', {
          stage: 'conditions',
          outcome: 'tool_not_granted',
          mode: 'audit',
          rule: 'small-refunds',
        }),
        1,
      );

      const noGrant = await post(gate.url, call(22, 'send_email', { to: 'x@example.com' }), alice);
      assert.equal(noGrant.status, 200, 'a grant refusal is shadowed too');
      assert.equal(
        await metricValue(gate.adminUrl, 'toolgate_decisions_total', {
          stage: 'grants',
          outcome: 'tool_not_granted',
          mode: 'audit',
          rule: '',
        }),
        1,
      );

      const lines = async () =>
        (await readFile(join(dir, 'audit.log'), 'utf8'))
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l));
      await waitFor(async () => (await lines()).some((l) => l.api.request?.uid === '21'), 'the audit event');
      const event = (await lines()).find((l) => l.api.request?.uid === '21');
      assert.equal(event.unmapped.would_deny, true);
      assert.equal(event.unmapped.would_deny_code, 'tool_not_granted');
      assert.equal(event.unmapped.would_deny_stage, 'conditions');
      assert.equal(event.status, 'Success');
      assert.ok(!JSON.stringify(event).includes(CANARY));

      const span = exporter.getFinishedSpans().find((s) => s.name === 'policy conditions');
      assert.equal(span?.attributes['toolgate.policy.would_deny'], true);
      assert.equal(span?.attributes['toolgate.policy.mode'], 'audit');

      const anonymous = await post(gate.url, call(23, 'refund', { amount: 1 }), {});
      assert.equal(anonymous.status, 401, 'authentication is enforced in audit mode');
      const malformed = await post(
        gate.url,
        '{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"arguments":{}}}',
        alice,
      );
      assert.equal(refusalOf(malformed)?.code, 'unknown_tool', 'a call naming no tool is refused in audit mode');
      assert.equal(up.calls.length, before + 2);
    } finally {
      await gate.close();
      await up.close();
    }
  });
});
