import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { approvalPage, escapeHtml } from '../../../src/http/approver/page.ts';
import { csrfToken, csrfValid, issueSession, readSession } from '../../../src/http/approver/session.ts';

describe('the approver page rendering', () => {
  const record = {
    id: 'x'.repeat(22),
    binding: 'b',
    principal: 'caller"><b>',
    tool: 'refund_payment',
    argumentsDigest: 'd',
    policyRevision: '1.a',
    approverScope: 's',
    selfApproval: false,
    createdAt: 0,
    expiresAt: 10_000,
    state: 'pending' as const,
    arguments: JSON.stringify({ note: '<script>alert(1)</script>', q: '"><img src=x onerror=alert(1)>' }),
  };

  it('escapes every dynamic value: arguments, principal, description and annotations', () => {
    const html = approvalPage(
      record,
      { description: '</dd><script>x</script>', annotations: { title: '<i>' } },
      'alice<',
      'tok"en',
      1,
    );
    assert.ok(!/<script|<img|<b>|<i>/i.test(html), html);
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    assert.ok(html.includes('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;'));
    assert.ok(html.includes('value="tok&quot;en"'));
  });

  it('has no form once the approval is decided or expired', () => {
    assert.ok(!approvalPage(record, {}, 'alice', 't', 10_000).includes('<form'));
    assert.ok(
      !approvalPage({ ...record, state: 'approved', decidedBy: 'alice' }, {}, 'alice', 't', 1).includes('<form'),
    );
  });

  it('escapes the five HTML metacharacters', () => {
    assert.equal(escapeHtml(`&<>"'`), '&amp;&lt;&gt;&quot;&#39;');
  });
});

describe('approver sessions and CSRF tokens', () => {
  const key = Buffer.alloc(32, 1);
  const csrfKey = Buffer.alloc(32, 2);

  it('reads back a session it issued, and refuses an expired or altered one', () => {
    const cookie = issueSession(key, { id: 'alice', scopes: new Set(['payments.approve']) }, 0);
    const s = readSession(key, cookie, 1);
    assert.equal(s?.id, 'alice');
    assert.ok(s?.scopes.has('payments.approve'));
    assert.equal(readSession(key, cookie, 3_600_001), undefined);
    const [payload, sig] = cookie.split('.') as [string, string];
    const forged = Buffer.from(
      JSON.stringify({ sub: 'mallory', sc: ['payments.approve'], exp: 9e15, sid: 'x' }),
    ).toString('base64url');
    assert.equal(readSession(key, `${forged}.${sig}`, 1), undefined);
    assert.equal(readSession(key, `${payload}.${sig}`, 1)?.id, 'alice');
    assert.equal(readSession(Buffer.alloc(32, 3), cookie, 1), undefined);
  });

  it('binds a CSRF token to its session', () => {
    const token = csrfToken(csrfKey, 'session\u0000a');
    assert.ok(csrfValid(csrfKey, 'session\u0000a', token));
    assert.equal(csrfValid(csrfKey, 'session\u0000b', token), false);
    assert.equal(csrfValid(csrfKey, 'session\u0000a', undefined), false);
    assert.equal(csrfValid(csrfKey, 'session\u0000a', ''), false);
  });
});
