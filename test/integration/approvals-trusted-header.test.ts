/**
 * The approver page behind an authenticating proxy: the approver's id and
 * scopes come from configured headers, with no sign-in; the CSRF token is
 * bound to that identity and the same rules (scope, self-approval) hold.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  APPROVAL_KEYS_YAML,
  CALLER_KEY,
  approvalPolicy,
  startApprovalUpstream,
  type ApprovalUpstream,
} from '../helpers/approval-upstream.ts';
import { hidden } from '../helpers/approver-client.ts';
import { startGateWith, type PolicyGate } from '../helpers/policy-gate.ts';
import { passed, post, refusedCall } from '../helpers/raw.ts';

describe('approver page with TOOLGATE_APPROVAL_TRUSTED_HEADER', () => {
  let setup: PolicyGate<ApprovalUpstream>;
  let url: string;
  const args = { amount: 300, currency: 'EUR' };
  const call = () =>
    post(
      setup.gate.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'refund_payment', arguments: args },
      }),
      {
        authorization: `Bearer ${CALLER_KEY}`,
        'mcp-protocol-version': '2025-06-18',
      },
    );
  const as = (id: string, groups: string) => ({ 'x-forwarded-user': id, 'x-forwarded-groups': groups });
  const form = (headers: Record<string, string>, fields: Record<string, string>) =>
    fetch(`${url}/decision`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });

  before(async () => {
    setup = await startGateWith(
      startApprovalUpstream,
      { 'policy.yaml': approvalPolicy(), 'keys.yaml': APPROVAL_KEYS_YAML },
      [
        '--approval-port',
        '0',
        '--approval-trusted-header',
        'X-Forwarded-User',
        '--approval-trusted-scopes-header',
        'X-Forwarded-Groups',
      ],
    );
    url = String(refusedCall(await call(), 'approval_required').url);
  });
  after(() => setup?.close());

  it('refuses a request without the header as approver_unauthenticated, and offers no sign-in form', async () => {
    const r = await fetch(url);
    assert.equal(r.status, 401);
    assert.equal(r.headers.get('toolgate-error'), 'approver_unauthenticated');
    assert.ok(!(await r.text()).includes('credential'));
  });

  it('takes id and scopes from the headers; the token of one identity is refused for another; the caller cannot approve itself', async () => {
    const alice = as('alice', 'payments.approve, other');
    const page = await fetch(url, { headers: alice });
    assert.equal(page.status, 200);
    const csrf = hidden(await page.text(), 'csrf');
    const stolen = await form(as('mallory', 'payments.approve'), { csrf, decision: 'approve' });
    assert.equal(stolen.headers.get('toolgate-error'), 'approval_csrf_invalid');
    const selfPage = await fetch(url, { headers: as('caller', 'payments.approve') });
    const self = await form(as('caller', 'payments.approve'), {
      csrf: hidden(await selfPage.text(), 'csrf'),
      decision: 'approve',
    });
    assert.equal(self.headers.get('toolgate-error'), 'self_approval_refused');
    const noScopePage = await fetch(url, { headers: as('bob', 'payments') });
    const noScope = await form(as('bob', 'payments'), {
      csrf: hidden(await noScopePage.text(), 'csrf'),
      decision: 'approve',
    });
    assert.equal(noScope.headers.get('toolgate-error'), 'approver_scope_required');
    assert.equal((await form(alice, { csrf, decision: 'approve' })).status, 303);
    const before = setup.upstream.executions.get('refund_payment') ?? 0;
    assert.ok(passed(await call()));
    assert.equal(setup.upstream.executions.get('refund_payment'), before + 1);
  });
});
