/**
 * Numbers beyond 2^53 and audit-mode rows beside enforced ones, through the
 * three doors that decide: the live proxy (real toolgate, real MCP servers),
 * `toolgate policy test|explain`, and gRPC PolicyService.Explain. Every door
 * must give the same answer, and the upstream must never receive a call a
 * deny row holds for.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ExplainResponse__Output } from '../../src/grpc/generated/toolgate/v1/ExplainResponse.ts';
import { run as policyCommand } from '../../src/commands/policy.ts';
import { grpcClients, type GrpcClients } from '../unit/grpc/client.ts';
import {
  APPROVAL_KEYS_YAML,
  ALICE_KEY,
  CALLER_KEY,
  approvalPolicy,
  startApprovalUpstream,
  type ApprovalUpstream,
} from '../helpers/approval-upstream.ts';
import { ApproverClient } from '../helpers/approver-client.ts';
import { startPolicyServer } from '../helpers/mcp-policy-server.ts';
import { metricValue } from '../helpers/metrics.ts';
import { startGateWith, type PolicyGate } from '../helpers/policy-gate.ts';
import { post, refusalOf, refusedCall } from '../helpers/raw.ts';
import { sha256 } from '../helpers/static-keys.ts';
import { waitFor } from '../helpers/wait.ts';

const KEY = 'decider-key-5e1a9c3f7b2d4e6a8c0b';
const auth = { authorization: `Bearer ${KEY}` };
const TWO_53 = '9007199254740992';
const TWO_53_PLUS_1 = '9007199254740993';

const TOOLS: Tool[] = [
  {
    name: 'transfer',
    inputSchema: {
      type: 'object',
      properties: { account: { type: 'integer' }, amount: { type: 'integer' }, memo: { type: 'integer' } },
    },
  },
  { name: 'query', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } },
  { name: 'query_reversed', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } },
];

// The same two deny rows for `query` and `query_reversed`, in both file orders.
const POLICY = `version: 1
authentication:
  staticKeys: { file: keys.yaml }
tools:
  transfer: { sideEffect: non_idempotent_write }
grants:
  - { principal: "*", tool: transfer, scopes: [pay], effect: allow, when: "args.amount <= ${TWO_53}", name: bounded-transfers }
  - { principal: "*", tool: transfer, scopes: [pay], effect: deny, when: "args.account == ${TWO_53_PLUS_1}", name: frozen-account }
  - { principal: "*", tool: query, scopes: [pay], effect: allow }
  - { principal: "*", tool: query, scopes: [pay], effect: deny, when: 'args.q.contains("drop")', name: no-drop }
  - { principal: "*", tool: query, scopes: [pay], effect: deny, when: 'args.q.contains("del")', enforcement: audit, name: maybe-no-del }
  - { principal: "*", tool: query_reversed, scopes: [pay], effect: allow }
  - { principal: "*", tool: query_reversed, scopes: [pay], effect: deny, when: 'args.q.contains("del")', enforcement: audit, name: maybe-no-del-r }
  - { principal: "*", tool: query_reversed, scopes: [pay], effect: deny, when: 'args.q.contains("drop")', name: no-drop-r }
`;

/** A tools/call body written by hand: JSON.stringify cannot spell 9007199254740993. */
const rawCall = (id: number, tool: string, argsJson: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${tool}","arguments":${argsJson}}}`;

interface Case {
  readonly name: string;
  readonly tool: string;
  readonly args: string;
  /** `allow`, `audit_deny`, or the refusal code. */
  readonly expect: 'allow' | 'audit_deny' | 'tool_not_granted';
  /** The row the decision names. */
  readonly rule?: string;
}

const CASES: readonly Case[] = [
  {
    name: 'a deny row on an account beyond 2^53 holds for exactly that account',
    tool: 'transfer',
    args: `{"account":${TWO_53_PLUS_1},"amount":1}`,
    expect: 'tool_not_granted',
    rule: 'frozen-account',
  },
  {
    name: 'the neighbouring account a double rounds it to is not that account',
    tool: 'transfer',
    args: `{"account":${TWO_53},"amount":1}`,
    expect: 'allow',
    rule: 'bounded-transfers',
  },
  {
    name: 'an allow row bounded at 2^53 does not allow 2^53 + 1',
    tool: 'transfer',
    args: `{"account":1,"amount":${TWO_53_PLUS_1}}`,
    expect: 'tool_not_granted',
  },
  {
    name: 'an allow row bounded at 2^53 allows 2^53',
    tool: 'transfer',
    args: `{"account":1,"amount":${TWO_53}}`,
    expect: 'allow',
    rule: 'bounded-transfers',
  },
  {
    name: 'an integer beyond int64 is not judged as another number: the deny row applies',
    tool: 'transfer',
    args: '{"account":99999999999999999999,"amount":1}',
    expect: 'tool_not_granted',
  },
  {
    name: 'an enforced deny and an audit-mode deny both hold: the enforced one decides',
    tool: 'query',
    args: '{"q":"drop del"}',
    expect: 'tool_not_granted',
    rule: 'no-drop',
  },
  {
    name: 'the same in the other file order',
    tool: 'query_reversed',
    args: '{"q":"drop del"}',
    expect: 'tool_not_granted',
    rule: 'no-drop-r',
  },
  {
    name: 'the audit-mode deny alone is recorded, not enforced',
    tool: 'query',
    args: '{"q":"del"}',
    expect: 'audit_deny',
    rule: 'maybe-no-del',
  },
  {
    name: 'the enforced deny alone',
    tool: 'query_reversed',
    args: '{"q":"drop"}',
    expect: 'tool_not_granted',
    rule: 'no-drop-r',
  },
];

describe('three doors decide alike: numbers beyond 2^53 and audit-mode rows', () => {
  let setup: PolicyGate;
  let api: GrpcClients;
  let n = 0;
  let auditDir: string;

  before(async () => {
    auditDir = await mkdtemp(join(tmpdir(), 'toolgate-doors-audit-'));
    setup = await startGateWith(
      async () => {
        const s = await startPolicyServer();
        s.extraTools.push(...TOOLS);
        return s;
      },
      {
        'keys.yaml': `keys:\n  - { sha256: ${sha256(KEY)}, principal: decider, scopes: [pay] }\n`,
        'policy.yaml': POLICY,
      },
      (dir) => [
        '--grpc',
        'true',
        '--grpc-port',
        '0',
        '--audit-log',
        join(auditDir, 'audit.jsonl'),
        '--idempotency-file',
        join(dir, 'idempotency.journal'),
      ],
    );
    api = grpcClients(setup.gate.grpcPort as number);
  });
  after(async () => {
    api.close();
    await setup.close();
    await rm(auditDir, { recursive: true, force: true });
  });

  for (const c of CASES) {
    it(`proxy: ${c.name}`, async () => {
      const before = setup.upstream.calls.length;
      const res = await post(setup.gate.url, rawCall(++n, c.tool, c.args), auth);
      if (c.expect === 'tool_not_granted') {
        refusedCall(res, 'tool_not_granted');
        assert.ok(
          !res.text.includes(TWO_53_PLUS_1) && !res.text.includes('drop') && !res.text.includes('args.'),
          'echoes no argument or expression',
        );
        assert.equal(setup.upstream.calls.length, before, 'nothing reached the upstream');
      } else {
        assert.equal(res.status, 200, res.text);
        assert.equal(refusalOf(res), undefined, res.text);
        assert.equal(setup.upstream.calls.length, before + 1);
        // The upstream gets the digits as sent.
        assert.ok(setup.upstream.calls.at(-1)?.body.includes(c.args), 'forwarded byte for byte');
      }
    });

    it(`gRPC Explain: ${c.name}`, async () => {
      const r = await api.call<ExplainResponse__Output>(
        'PolicyService',
        'Explain',
        { method: 'tools/call', tool: c.tool, argumentsJson: c.args },
        auth.authorization,
      );
      assert.equal(r.decision, c.expect === 'tool_not_granted' ? 'deny' : c.expect, JSON.stringify(r.stages));
      if (c.expect === 'tool_not_granted') {
        assert.deepEqual(
          r.stages.filter((s) => s.outcome === 'deny').map((s) => [s.name, s.code]),
          [['conditions', 'tool_not_granted']],
          'the stage that decided, and no other',
        );
      }
      if (c.rule !== undefined) assert.equal(r.rows[0]?.name, c.rule);
      assert.ok(!r.stages.some((s) => s.code === 'inexact_number'), 'read exactly, so never refused as inexact');
    });
  }

  it('policy test: every case gets the same answer from the offline door (YAML integers read exactly)', async () => {
    const tests = `tests:\n${CASES.map(
      (c) => `  - name: ${JSON.stringify(c.name)}
    principal: { id: decider, scopes: [pay] }
    tool: ${c.tool}
    arguments: ${c.args}
    expect: ${c.expect === 'tool_not_granted' ? '{ deny: tool_not_granted }' : c.expect}\n`,
    ).join('')}`;
    const file = join(setup.dir, 'doors.test.yaml');
    await writeFile(file, tests);
    let out = '';
    const code = await policyCommand(['test', join(setup.dir, 'policy.yaml'), file], {
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: (t: string) => (out += t) },
    });
    assert.equal(code, 0, out);
    assert.equal(out.match(/^ok \d+/gm)?.length, CASES.length, out);
  });

  it('policy explain: the enforced row is named as the deciding one, in either file order', async () => {
    for (const [tool, rule] of [
      ['query', 'no-drop'],
      ['query_reversed', 'no-drop-r'],
    ] as const) {
      let out = '';
      const code = await policyCommand(
        [
          'explain',
          join(setup.dir, 'policy.yaml'),
          '--principal',
          'decider',
          '--scopes',
          'pay',
          '--tool',
          tool,
          '--args',
          '{"q":"drop del"}',
        ],
        { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (out += t) } },
      );
      assert.equal(code, 0, out);
      const r = JSON.parse(out) as ExplainResponse__Output;
      assert.equal(r.decision, 'deny');
      assert.equal(r.rows[0]?.name, rule);
      assert.equal(r.rows[0]?.enforcement, 'enforce');
    }
  });

  it('the audit row that held beside the enforced refusal is still recorded: metrics and the audit event', async () => {
    const before = await metricValue(setup.gate.adminUrl, 'toolgate_decisions_total', {
      stage: 'conditions',
      outcome: 'tool_not_granted',
      mode: 'audit',
      rule: 'maybe-no-del',
    });
    const res = await post(setup.gate.url, rawCall(++n, 'query', '{"q":"drop del canary-7781"}'), auth);
    refusedCall(res, 'tool_not_granted');
    assert.equal(
      await metricValue(setup.gate.adminUrl, 'toolgate_decisions_total', {
        stage: 'conditions',
        outcome: 'tool_not_granted',
        mode: 'audit',
        rule: 'maybe-no-del',
      }),
      before + 1,
    );
    const auditLog = join(auditDir, 'audit.jsonl');
    type Event = { unmapped?: Record<string, unknown>; status_code?: string; api?: { request?: { uid?: string } } };
    let event: Event | undefined;
    await waitFor(async () => {
      const lines = (await readFile(auditLog, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean);
      event = lines.map((l) => JSON.parse(l) as Event).find((e) => e.api?.request?.uid === String(n));
      return event !== undefined;
    }, 'the audit event of the refused call');
    assert.ok(event !== undefined);
    assert.equal(event.status_code, 'tool_not_granted');
    assert.equal(event.unmapped?.would_deny, true);
    assert.equal(event.unmapped?.would_deny_stage, 'conditions');
    assert.ok(!JSON.stringify(event).includes('canary-7781'), 'no argument in the audit event');
  });

  it('an idempotency key binds the digits: 2^53 and 2^53 + 1 under one key are two calls, not a replay', async () => {
    const keyed = { ...auth, 'idempotency-key': 'memo-key-1' };
    const first = await post(
      setup.gate.url,
      rawCall(++n, 'transfer', `{"account":1,"amount":1,"memo":${TWO_53}}`),
      keyed,
    );
    assert.equal(first.status, 200, first.text);
    const other = await post(
      setup.gate.url,
      rawCall(++n, 'transfer', `{"account":1,"amount":1,"memo":${TWO_53_PLUS_1}}`),
      keyed,
    );
    refusedCall(other, 'idempotency_key_reused');
    assert.ok(!other.text.includes(TWO_53_PLUS_1));
  });
});

describe('approvals bind the digits the server will read', () => {
  let setup: PolicyGate<ApprovalUpstream>;
  let n = 100;
  const call = (amount: string) =>
    post(setup.gate.url, rawCall(++n, 'refund_payment', `{"amount":${amount},"currency":"EUR"}`), {
      authorization: `Bearer ${CALLER_KEY}`,
      'mcp-protocol-version': '2025-06-18',
    });
  const askedUrl = async (amount: string) => {
    const r = await call(amount);
    const data = refusedCall(r, 'approval_required') as { url: string };
    assert.ok(!r.text.includes(amount), 'the refusal echoes no argument');
    return data.url;
  };

  before(async () => {
    setup = await startGateWith(
      startApprovalUpstream,
      { 'policy.yaml': approvalPolicy(), 'keys.yaml': APPROVAL_KEYS_YAML },
      ['--approval-port', '0', '--grpc', 'true', '--grpc-port', '0'],
    );
  });
  after(() => setup.close());

  it('the three doors say approval_required for a require_approval row, and name it; policy test no longer passes allow', async () => {
    const io = () => {
      let out = '';
      return {
        io: { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (out += t) } },
        out: () => out,
      };
    };
    const principal = '{ id: caller, scopes: [payments] }';
    const tests = `tests:
  - { name: large, principal: ${principal}, tool: refund_payment, arguments: { amount: 500, currency: EUR }, expect: approval_required }
  - { name: small, principal: ${principal}, tool: refund_payment, arguments: { amount: 5, currency: EUR }, expect: allow }
`;
    await writeFile(join(setup.dir, 'ask.test.yaml'), tests);
    const passing = io();
    assert.equal(
      await policyCommand(['test', join(setup.dir, 'policy.yaml'), join(setup.dir, 'ask.test.yaml')], passing.io),
      0,
      passing.out(),
    );
    await writeFile(join(setup.dir, 'allow.test.yaml'), tests.replace('expect: approval_required', 'expect: allow'));
    const failing = io();
    assert.equal(
      await policyCommand(['test', join(setup.dir, 'policy.yaml'), join(setup.dir, 'allow.test.yaml')], failing.io),
      1,
      failing.out(),
    );
    assert.match(failing.out(), /not ok 1 - .*expected allow, got approval_required/);

    const explained = io();
    assert.equal(
      await policyCommand(
        [
          'explain',
          join(setup.dir, 'policy.yaml'),
          '--principal',
          'caller',
          '--scopes',
          'payments',
          '--tool',
          'refund_payment',
          '--args',
          '{"amount":500,"currency":"EUR"}',
        ],
        explained.io,
      ),
      0,
      explained.out(),
    );
    const offline = JSON.parse(explained.out()) as ExplainResponse__Output;
    const api = grpcClients(setup.gate.grpcPort as number);
    try {
      const online = await api.call<ExplainResponse__Output>(
        'PolicyService',
        'Explain',
        { method: 'tools/call', tool: 'refund_payment', argumentsJson: '{"amount":500,"currency":"EUR"}' },
        `Bearer ${CALLER_KEY}`,
      );
      for (const r of [offline, online]) {
        assert.equal(r.decision, 'approval_required');
        assert.deepEqual(
          r.stages.filter((x) => x.outcome === 'deny').map((x) => [x.name, x.code]),
          [['approval', 'approval_required']],
        );
        assert.deepEqual(
          r.rows.map((row) => row.name),
          ['large-refunds'],
          'the row that asks',
        );
      }
    } finally {
      api.close();
    }
  });

  it('an approval given for 2^53 does not let 2^53 + 1 run; the page shows every digit', async () => {
    const url = await askedUrl(TWO_53);
    const alice = new ApproverClient();
    const page = await alice.signIn(url, ALICE_KEY);
    assert.equal(page.status, 200, page.text);
    assert.ok(
      page.text.includes(`&quot;amount&quot;: ${TWO_53}`) || page.text.includes(`"amount": ${TWO_53}`),
      'the approved amount, as sent',
    );
    assert.equal((await alice.decide(url, 'approve')).status, 303);

    const runs = () => setup.upstream.executions.get('refund_payment') ?? 0;
    const before = runs();
    const other = await askedUrl(TWO_53_PLUS_1);
    assert.notEqual(other, url, 'another call, another approval');
    assert.equal(runs(), before, 'the approval for 2^53 did not run 2^53 + 1');
    const otherPage = await alice.get(other);
    assert.ok(
      otherPage.text.includes(TWO_53_PLUS_1),
      'the page shows what the server will read, not the rounded number',
    );

    const approved = await call(TWO_53);
    assert.equal(approved.status, 200, approved.text);
    assert.equal(runs(), before + 1);
  });
});
