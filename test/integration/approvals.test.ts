/**
 * Human approval over real HTTP: toolgate in front of a real MCP server (v2
 * SDK), callers speaking each protocol revision as raw JSON-RPC, approvers on
 * the page as a script-less browser would (cookies, forms, CSRF tokens).
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { status } from '@grpc/grpc-js';
import type { DecideResponse__Output } from '../../src/grpc/generated/toolgate/v1/DecideResponse.ts';
import type { ListPendingResponse__Output } from '../../src/grpc/generated/toolgate/v1/ListPendingResponse.ts';
import { grpcClients, refusal, type GrpcClients } from '../unit/grpc/client.ts';
import {
  ALICE_KEY,
  APPROVAL_KEYS_YAML,
  BOB_KEY,
  CALLER_KEY,
  OPS_KEY,
  approvalPolicy,
  startApprovalUpstream,
  type ApprovalUpstream,
} from '../helpers/approval-upstream.ts';
import { ApproverClient, hidden } from '../helpers/approver-client.ts';
import { startGateWith, type PolicyGate } from '../helpers/policy-gate.ts';
import { listenOnLoopback, readAll, type Listening } from '../helpers/http-server.ts';
import { post, refusalOf, refusedCall, type RawResponse } from '../helpers/raw.ts';
import { metricValue } from '../helpers/metrics.ts';
import { waitFor } from '../helpers/wait.ts';

const HOSTILE = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>'];

describe('require_approval over HTTP: one approval lets exactly one identical call run', () => {
  let setup: PolicyGate<ApprovalUpstream>;
  let n = 0;
  const call = (
    args: Record<string, unknown>,
    version = '2025-06-18',
    key = CALLER_KEY,
    tool = 'refund_payment',
    extra: Record<string, unknown> = {},
  ) =>
    post(
      setup.gate.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: ++n,
        method: 'tools/call',
        params: { name: tool, arguments: args, ...extra },
      }),
      {
        authorization: `Bearer ${key}`,
        'mcp-protocol-version': version,
        ...(version >= '2026-07-28' && { 'mcp-method': 'tools/call', 'mcp-name': tool }),
      },
    );
  const runs = (tool = 'refund_payment') => setup.upstream.executions.get(tool) ?? 0;
  const pendingUrl = (r: RawResponse) => {
    const data = refusedCall(r, 'approval_required') as { url: string; approvalId: string };
    assert.match(refusalOf(r)?.text ?? '', new RegExp(`open ${data.url.replace(/[.?]/g, '\\$&')} to approve`));
    return data.url;
  };

  let auditDir: string;
  before(async () => {
    auditDir = await mkdtemp(join(tmpdir(), 'toolgate-approval-audit-'));
    setup = await startGateWith(
      startApprovalUpstream,
      { 'policy.yaml': approvalPolicy(), 'keys.yaml': APPROVAL_KEYS_YAML },
      ['--approval-port', '0', '--audit-log', join(auditDir, 'audit.jsonl')],
    );
  });
  after(async () => {
    await setup.close();
    await rm(auditDir, { recursive: true, force: true });
  });

  it('asks older clients (2025-06-18) with 403 approval_required, names the tool and echoes no argument', async () => {
    const secret = 'do-not-echo-7f3a';
    const r = await call({ amount: 250, currency: 'EUR', note: secret });
    const url = pendingUrl(r);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/approvals\/[A-Za-z0-9_-]{22}$/);
    assert.ok(!r.text.includes(secret) && !r.text.includes('250'), r.text);
    assert.equal(runs(), 0);
  });

  it('lets calls the condition does not hold for run without approval', async () => {
    const before = runs();
    const r = await call({ amount: 50, currency: 'EUR' });
    assert.equal(r.status, 200, r.text);
    assert.equal(runs(), before + 1);
  });

  it('answers 2025-11-25 outside a session that declared URL elicitation with approval_required, never -32042', async () => {
    // The fixture is stateless: no session carries an initialize, so no -32042 (approvals-wait.test.ts has the session case).
    const r = await call({ amount: 300, currency: 'EUR', note: 'x-secret-1' }, '2025-11-25');
    assert.notEqual(r.json().error?.code, -32042);
    pendingUrl(r);
    assert.ok(!r.text.includes('x-secret-1') && !r.text.includes('300'));
  });

  it('answers 2026-07-28 clients declaring url elicitation with input_required and a signed requestState; a tampered state is refused', async () => {
    const meta = { _meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } } };
    const r = await call({ amount: 400, currency: 'EUR' }, '2026-07-28', CALLER_KEY, 'refund_payment', meta);
    assert.equal(r.status, 200, r.text);
    const result = r.json().result as {
      resultType: string;
      inputRequests: Record<string, { method: string; params: { mode: string; url: string } }>;
      requestState: string;
    };
    assert.equal(result.resultType, 'input_required');
    assert.equal(result.inputRequests.toolgate_approval?.method, 'elicitation/create');
    assert.equal(result.inputRequests.toolgate_approval?.params.mode, 'url');
    // One character changed where all six of its bits count (not the last, whose spare bits may not):
    // overwriting the tail with a fixed "AA" left the state as it was whenever it already ended so.
    const at = result.requestState.length - 3;
    const flipped = result.requestState[at] === 'A' ? 'B' : 'A';
    const tampered = `${result.requestState.slice(0, at)}${flipped}${result.requestState.slice(at + 1)}`;
    const bad = await call({ amount: 400, currency: 'EUR' }, '2026-07-28', CALLER_KEY, 'refund_payment', {
      ...meta,
      requestState: tampered,
    });
    refusedCall(bad, 'approval_state_invalid');
    // The same state on other arguments is refused too: it is bound to the call.
    const other = await call({ amount: 401, currency: 'EUR' }, '2026-07-28', CALLER_KEY, 'refund_payment', {
      ...meta,
      requestState: result.requestState,
    });
    refusedCall(other, 'approval_state_invalid');
    // Without the capability the client gets the URL as an error.
    const plain = await call({ amount: 400, currency: 'EUR' }, '2026-07-28');
    pendingUrl(plain);
  });

  it('a 2026-07-28 continuation reaches the upstream as the original call, without what toolgate added', async () => {
    const meta = {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } },
      },
    };
    const args = { amount: 450, currency: 'EUR' };
    const first = (await call(args, '2026-07-28', CALLER_KEY, 'refund_payment', meta)).json().result as {
      inputRequests: Record<string, { params: { url: string } }>;
      requestState: string;
    };
    const url = first.inputRequests.toolgate_approval?.params.url as string;
    const alice = new ApproverClient();
    assert.equal((await alice.signIn(url, ALICE_KEY)).status, 200);
    assert.equal((await alice.decide(url, 'approve')).status, 303);
    const before = runs();
    const ran = await call(args, '2026-07-28', CALLER_KEY, 'refund_payment', {
      ...meta,
      requestState: first.requestState,
      inputResponses: { toolgate_approval: { action: 'accept' } },
    });
    assert.equal(ran.status, 200, ran.text);
    assert.equal(runs(), before + 1);
    const seen = setup.upstream.calls.at(-1) as Record<string, unknown>;
    assert.deepEqual(Object.keys(seen).sort(), ['_meta', 'arguments', 'name']);
    assert.deepEqual(seen.arguments, args);
  });

  it('approved once: the repeat runs once, a further repeat needs a new approval', async () => {
    const args = { amount: 500, currency: 'EUR' };
    const url = pendingUrl(await call(args));
    const alice = new ApproverClient();
    const page = await alice.signIn(url, ALICE_KEY);
    assert.equal(page.status, 200, page.text);
    assert.equal((await alice.decide(url, 'approve')).status, 303);
    const before = runs();
    const ran = await call(args);
    assert.equal(ran.status, 200, ran.text);
    assert.equal(runs(), before + 1);
    const again = pendingUrl(await call(args));
    assert.notEqual(again, url);
    assert.equal(runs(), before + 1);
  });

  it('binds the approval to the arguments: changed arguments need their own approval', async () => {
    const url = pendingUrl(await call({ amount: 600, currency: 'EUR' }));
    const alice = new ApproverClient();
    await alice.signIn(url, ALICE_KEY);
    await alice.decide(url, 'approve');
    const before = runs();
    const changed = pendingUrl(await call({ amount: 601, currency: 'EUR' }));
    assert.notEqual(changed, url);
    assert.equal(runs(), before);
    // The same arguments in another key order and number spelling are the same call (RFC 8785).
    assert.equal((await call({ currency: 'EUR', amount: 6.0e2 })).status, 200);
    assert.equal(runs(), before + 1);
  });

  it('binds the approval to the policy revision: after a policy change the approved call needs a new approval', async () => {
    const args = { amount: 650, currency: 'EUR' };
    const url = pendingUrl(await call(args));
    const alice = new ApproverClient();
    await alice.signIn(url, ALICE_KEY);
    await alice.decide(url, 'approve');
    const applied = await metricValue(setup.gate.adminUrl, 'toolgate_policy_reloads_total', { outcome: 'applied' });
    await writeFile(join(setup.dir, 'policy.yaml'), `${approvalPolicy()}# reviewed\n`);
    await waitFor(
      async () =>
        (await metricValue(setup.gate.adminUrl, 'toolgate_policy_reloads_total', { outcome: 'applied' })) > applied,
      'the policy reload',
      10_000,
    );
    const before = runs();
    assert.notEqual(pendingUrl(await call(args)), url);
    assert.equal(runs(), before);
  });

  it('denied: the repeat fails with approval_denied, once', async () => {
    const args = { amount: 700, currency: 'EUR' };
    const before = runs();
    const url = pendingUrl(await call(args));
    const alice = new ApproverClient();
    await alice.signIn(url, ALICE_KEY);
    assert.equal((await alice.decide(url, 'deny')).status, 303);
    const r = await call(args);
    refusedCall(r, 'approval_denied');
    assert.equal(runs(), before);
    // Told once: the next identical call asks for a new approval.
    assert.notEqual(pendingUrl(await call(args)), url);
  });

  it('refuses self-approval, approvers without the scope, a decided approval and a bad sign-in, each with its registry code', async () => {
    const url = pendingUrl(await call({ amount: 800, currency: 'EUR' }));
    const self = new ApproverClient();
    assert.equal((await self.signIn(url, CALLER_KEY)).status, 200);
    const refused = await self.decide(url, 'approve');
    assert.equal(refused.status, 403);
    assert.equal(refused.headers.get('toolgate-error'), 'self_approval_refused');
    const bob = new ApproverClient();
    await bob.signIn(url, BOB_KEY);
    const scope = await bob.decide(url, 'approve');
    assert.equal(scope.status, 403);
    assert.equal(scope.headers.get('toolgate-error'), 'approver_scope_required');
    const alice = new ApproverClient();
    const csrf = hidden((await alice.signIn(url, ALICE_KEY)).text, 'csrf');
    assert.equal((await alice.decide(url, 'deny')).status, 303);
    const twice = await alice.decide(url, 'approve', csrf);
    assert.equal(twice.status, 409);
    assert.equal(twice.headers.get('toolgate-error'), 'approval_already_decided');
    const wrong = await new ApproverClient().signIn(url, 'not-a-key');
    assert.equal(wrong.status, 401);
    assert.ok(!wrong.text.includes('not-a-key'));
  });

  it('records requested, approved and spent steps in audit events and metrics, with digests and no argument values', async () => {
    const args = { amount: 950, currency: 'EUR', note: 'audit-secret-91' };
    const url = pendingUrl(await call(args));
    const alice = new ApproverClient();
    await alice.signIn(url, ALICE_KEY);
    await alice.decide(url, 'approve');
    assert.equal((await call(args)).status, 200);
    const id = url.slice(url.lastIndexOf('/') + 1);
    let events: Record<string, any>[] = [];
    await waitFor(async () => {
      events = (await readFile(join(auditDir, 'audit.jsonl'), 'utf8').catch(() => ''))
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      return events.filter((e) => e.unmapped?.approval_id === id).length === 3;
    }, 'three audit events for the approval');
    const mine = events.filter((e) => e.unmapped?.approval_id === id);
    assert.deepEqual(
      mine.map((e) => e.status_code),
      ['approval_requested', 'approval_approved', 'approval_spent'],
    );
    assert.equal(mine[1]?.unmapped.approver, 'alice');
    assert.equal(mine[1]?.unmapped.via, 'page');
    assert.match(mine[0]?.unmapped.arguments_digest, /^[0-9a-f]{64}$/);
    const text = await readFile(join(auditDir, 'audit.jsonl'), 'utf8');
    assert.ok(!text.includes('audit-secret-91'), 'no argument value in any audit event');
    const metrics = await (await fetch(`${setup.gate.adminUrl}/metrics`)).text();
    assert.match(metrics, /toolgate_approvals_total\{event="spent"\} [1-9]/);
    assert.match(metrics, /toolgate_approvals_total\{event="denied"\} [1-9]/);
    assert.ok(!metrics.includes('audit-secret-91'));
  });

  it('lets a row with selfApproval: true be approved by its own caller', async () => {
    const url = pendingUrl(await call({ amount: 5, currency: 'EUR' }, '2025-06-18', CALLER_KEY, 'self_refund'));
    const self = new ApproverClient();
    await self.signIn(url, CALLER_KEY);
    assert.equal((await self.decide(url, 'approve')).status, 303);
    assert.equal((await call({ amount: 5, currency: 'EUR' }, '2025-06-18', CALLER_KEY, 'self_refund')).status, 200);
    assert.equal(runs('self_refund'), 1);
  });
});

describe('the approver page: escaping, CSRF, CSP and cookies', () => {
  let setup: PolicyGate<ApprovalUpstream>;
  let url: string;
  before(async () => {
    setup = await startGateWith(
      startApprovalUpstream,
      { 'policy.yaml': approvalPolicy(), 'keys.yaml': APPROVAL_KEYS_YAML },
      ['--approval-port', '0'],
    );
    const r = await post(
      setup.gate.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'refund_payment', arguments: { amount: 999, currency: HOSTILE[1], note: HOSTILE[0] } },
      }),
      {
        authorization: `Bearer ${CALLER_KEY}`,
        'mcp-protocol-version': '2025-06-18',
      },
    );
    url = refusedCall(r, 'approval_required').url as string;
  });
  after(() => setup.close());

  it('shows the arguments pretty-printed and HTML-escaped, with the tool description and annotations', async () => {
    const alice = new ApproverClient();
    const page = await alice.signIn(url, ALICE_KEY);
    assert.equal(page.status, 200);
    for (const h of HOSTILE) assert.ok(!page.text.includes(h), `unescaped: ${h}`);
    assert.ok(page.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    assert.ok(page.text.includes('\\&quot;&gt;&lt;img src=x onerror=alert(1)&gt;'));
    assert.ok(!/<script|<img/i.test(page.text));
    assert.match(page.text, /&quot;amount&quot;: 999/);
    assert.match(page.text, /Refund a card payment to the customer/);
    assert.match(page.text, /destructiveHint/);
  });

  it('sends a strict Content-Security-Policy and no-store on every page', async () => {
    for (const target of [url, new URL('/approver.css', url).href, new URL('/nowhere', url).href]) {
      const res = await fetch(target);
      assert.equal(
        res.headers.get('content-security-policy'),
        "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      );
      assert.equal(res.headers.get('x-frame-options'), 'DENY');
      assert.equal(res.headers.get('cache-control'), 'no-store');
    }
  });

  it('issues the session as an HttpOnly, Secure, SameSite=Strict cookie', async () => {
    const client = new ApproverClient();
    const form = await client.get(url);
    assert.match(form.headers.get('set-cookie') ?? '', /HttpOnly; Secure; SameSite=Strict/);
    const signed = await client.postForm(new URL('/login', url).href, {
      csrf: hidden(form.text, 'csrf'),
      next: hidden(form.text, 'next'),
      credential: ALICE_KEY,
    });
    assert.equal(signed.status, 303);
    assert.ok(signed.headers.getSetCookie().some((c) => /^tg_approver=.*HttpOnly; Secure; SameSite=Strict$/.test(c)));
  });

  it("rejects a decision posted without the CSRF token, or with another session's, and decides nothing", async () => {
    const alice = new ApproverClient();
    await alice.signIn(url, ALICE_KEY);
    const other = new ApproverClient();
    const otherPage = await other.signIn(url, ALICE_KEY);
    for (const csrf of ['', hidden(otherPage.text, 'csrf')]) {
      const r = await alice.decide(url, 'approve', csrf);
      assert.equal(r.status, 403);
      assert.equal(r.headers.get('toolgate-error'), 'approval_csrf_invalid');
      if (csrf !== '') assert.ok(!r.text.includes(csrf));
    }
    assert.match((await alice.get(url)).text, /id="state">pending</);
  });

  it('rejects a sign-in posted without the sign-in CSRF token', async () => {
    const r = await new ApproverClient().postForm(new URL('/login', url).href, { credential: ALICE_KEY, next: '' });
    assert.equal(r.status, 403);
    assert.equal(r.headers.get('toolgate-error'), 'approval_csrf_invalid');
  });

  it('refuses a decision without a session as approver_unauthenticated', async () => {
    const r = await new ApproverClient().postForm(`${url}/decision`, { csrf: 'x', decision: 'approve' });
    assert.equal(r.status, 401);
    assert.equal(r.headers.get('toolgate-error'), 'approver_unauthenticated');
  });
});

describe('gRPC ApprovalService', () => {
  let setup: PolicyGate<ApprovalUpstream>;
  let api: GrpcClients;
  before(async () => {
    setup = await startGateWith(
      startApprovalUpstream,
      { 'policy.yaml': approvalPolicy(), 'keys.yaml': APPROVAL_KEYS_YAML },
      ['--grpc', 'true', '--grpc-port', '0'],
    );
    api = grpcClients(setup.gate.grpcPort as number);
  });
  after(async () => {
    api?.close();
    await setup?.close();
  });

  it('lists pending approvals (digests, no argument values) and decides one for an admin holding the approver scope', async () => {
    const call = () =>
      post(
        setup.gate.url,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'refund_payment', arguments: { amount: 900, currency: 'EUR', note: 'grpc-secret' } },
        }),
        {
          authorization: `Bearer ${CALLER_KEY}`,
          'mcp-protocol-version': '2025-06-18',
        },
      );
    const asked = await call();
    const data = refusedCall(asked, 'approval_required');
    const id = data.approvalId as string;
    // Without the page, the approval is still named (a URN) for gRPC and the CLI.
    assert.match(String(data.url), /^urn:toolgate\/approvals\//);
    const list = await api.call<ListPendingResponse__Output>('ApprovalService', 'ListPending', {}, `Bearer ${OPS_KEY}`);
    assert.deepEqual(
      list.approvals.map((a) => a.id),
      [id],
    );
    assert.ok(!JSON.stringify(list).includes('grpc-secret'));
    const noAdmin = await refusal(api.call('ApprovalService', 'ListPending', {}, `Bearer ${ALICE_KEY}`));
    assert.equal(noAdmin.code, status.PERMISSION_DENIED);
    assert.equal(noAdmin.metadata.get('toolgate-code')[0], 'admin_scope_required');
    const noScope = await refusal(api.call('ApprovalService', 'Decide', { id, approve: true }, `Bearer ${BOB_KEY}`));
    assert.equal(noScope.metadata.get('toolgate-code')[0], 'approver_scope_required');
    const decided = await api.call<DecideResponse__Output>(
      'ApprovalService',
      'Decide',
      { id, approve: true },
      `Bearer ${OPS_KEY}`,
    );
    assert.equal(decided.approval?.state, 'approved');
    assert.equal(decided.approval?.decidedBy, 'ops');
    const missing = await refusal(
      api.call('ApprovalService', 'Decide', { id: 'x'.repeat(22), approve: true }, `Bearer ${OPS_KEY}`),
    );
    assert.equal(missing.code, status.NOT_FOUND);
    const before = setup.upstream.executions.get('refund_payment') ?? 0;
    assert.equal((await call()).status, 200);
    assert.equal(setup.upstream.executions.get('refund_payment'), before + 1);
  });
});

describe('the approval webhook', () => {
  let setup: PolicyGate<ApprovalUpstream>;
  let receiver: Listening;
  const received: { headers: Record<string, unknown>; body: string }[] = [];
  const secret = 'w'.repeat(40);
  let keyDir: string;
  before(async () => {
    receiver = await listenOnLoopback(async (req, res) => {
      received.push({ headers: req.headers, body: (await readAll(req)).toString('utf8') });
      res.writeHead(204).end();
    });
    keyDir = await mkdtemp(join(tmpdir(), 'toolgate-hook-'));
    await writeFile(join(keyDir, 'hook.key'), secret);
    setup = await startGateWith(
      startApprovalUpstream,
      { 'policy.yaml': approvalPolicy(), 'keys.yaml': APPROVAL_KEYS_YAML },
      [
        '--approval-port',
        '0',
        '--approval-webhook-url',
        `${receiver.origin}/hook`,
        '--approval-webhook-secret-file',
        join(keyDir, 'hook.key'),
      ],
    );
  });
  after(async () => {
    await setup?.close();
    await receiver?.close();
    await rm(keyDir, { recursive: true, force: true });
  });

  it('POSTs each new pending approval once, signed t=<seconds>,v1=<HMAC-SHA256 hex of "t.body">, with no argument values', async () => {
    const args = { amount: 777, currency: 'EUR', note: 'hook-secret' };
    for (let i = 0; i < 2; i++) {
      await post(
        setup.gate.url,
        JSON.stringify({
          jsonrpc: '2.0',
          id: i,
          method: 'tools/call',
          params: { name: 'refund_payment', arguments: args },
        }),
        { authorization: `Bearer ${CALLER_KEY}`, 'mcp-protocol-version': '2025-06-18' },
      );
    }
    await waitFor(() => received.length >= 1, 'the webhook POST');
    await new Promise((done) => setTimeout(done, 200));
    assert.equal(received.length, 1, 'a repeat of a pending call is not a new approval');
    const [hook] = received as [{ headers: Record<string, unknown>; body: string }];
    const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(hook.headers['toolgate-signature']));
    assert.ok(m !== null, String(hook.headers['toolgate-signature']));
    assert.equal(m[2], createHmac('sha256', secret).update(`${m[1]}.${hook.body}`).digest('hex'));
    const body = JSON.parse(hook.body) as Record<string, unknown>;
    assert.equal(body.type, 'approval.pending');
    assert.equal(body.tool, 'refund_payment');
    assert.match(String(body.url), /\/approvals\//);
    assert.ok(!hook.body.includes('hook-secret') && !hook.body.includes('777'));
  });
});
