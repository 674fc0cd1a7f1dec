import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  isOurState,
  signState,
  subkey,
  verifyState,
  withoutContinuation,
} from '../../../src/approval/request-state.ts';
import { signature } from '../../../src/approval/webhook.ts';

describe('the 2026-07-28 requestState', () => {
  const key = subkey(randomBytes(32), 'state');
  const state = { approvalId: 'a'.repeat(22), binding: 'b'.repeat(64), expiresAt: 2000 };

  it('verifies for the binding it names, before it expires', () => {
    const text = signState(key, state);
    assert.ok(isOurState(text));
    assert.deepEqual(verifyState(key, text, state.binding, 1999), state);
  });

  it('refuses a tampered, expired, foreign-key or other-binding state', () => {
    const text = signState(key, state);
    const [prefix, payload, sig] = [text.slice(0, 15), ...text.slice(15).split('.')] as [string, string, string];
    const forged = Buffer.from(JSON.stringify({ a: state.approvalId, b: 'c'.repeat(64), e: 2000 })).toString(
      'base64url',
    );
    assert.equal(verifyState(key, `${prefix}${forged}.${sig}`, 'c'.repeat(64), 1), undefined);
    assert.equal(verifyState(key, `${prefix}${payload}.${sig}x`, state.binding, 1), undefined);
    assert.equal(verifyState(key, text, state.binding, 2000), undefined);
    assert.equal(verifyState(subkey(randomBytes(32), 'state'), text, state.binding, 1), undefined);
    assert.equal(verifyState(key, text, 'c'.repeat(64), 1), undefined);
    assert.equal(isOurState('upstream-state'), false);
  });

  it('is stripped with its inputResponses before the call goes upstream, and only when it is ours', () => {
    const ours = signState(key, state);
    const call = (requestState: string): Buffer =>
      Buffer.from(
        `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{"a" : 1},"requestState":${JSON.stringify(requestState)},"inputResponses":{"x":{"action":"accept"}}}}`,
      );
    const stripped = withoutContinuation({ requestState: ours }, call(ours));
    assert.deepEqual(JSON.parse(stripped.toString()), {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 't', arguments: { a: 1 } },
    });
    // The arguments' bytes are untouched: the upstream reads what the client wrote.
    assert.ok(stripped.includes('"arguments":{"a" : 1}'));
    const foreign = call('upstream-state');
    assert.equal(withoutContinuation({ requestState: 'upstream-state' }, foreign), foreign);
  });

  it('derives distinct keys per purpose, so a state never passes as a cookie', () => {
    const secret = randomBytes(32);
    assert.notDeepEqual(subkey(secret, 'state'), subkey(secret, 'session'));
    assert.notDeepEqual(subkey(secret, 'session'), subkey(secret, 'csrf'));
  });
});

describe('the webhook signature', () => {
  it('is t=<seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">', () => {
    const secret = Buffer.from('s'.repeat(32));
    const body = '{"type":"approval.pending"}';
    const expected = createHmac('sha256', secret).update(`1700000000.${body}`).digest('hex');
    assert.equal(signature(secret, body, 1_700_000_000), `t=1700000000,v1=${expected}`);
  });
});
