import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { authenticate } from '../../../src/auth/chain.ts';
import { createAnonymousVerifier } from '../../../src/auth/anonymous.ts';
import { createStaticKeyVerifier, parseStaticKeys } from '../../../src/auth/static-keys.ts';
import type { AuthRequest, Verifier } from '../../../src/auth/types.ts';
import { bearer } from './fixtures.ts';

const KEY = 'k-0123456789abcdef';
const keys = parseStaticKeys(`keys: [{sha256: ${createHash('sha256').update(KEY).digest('hex')}, principal: agent-a}]`);
assert.ok(keys.ok);
const staticKeys = createStaticKeyVerifier(keys.table);
const anonymous = createAnonymousVerifier(['public.read']);

function spy(name: string, result: Awaited<ReturnType<Verifier['verify']>>): Verifier & { calls: number } {
  const v = {
    name,
    calls: 0,
    verify: () => {
      v.calls++;
      return Promise.resolve(result);
    },
  };
  return v;
}

test('the first verifier that recognises the credential decides', async () => {
  const later = spy('later', { ok: true, principal: { id: 'x', scopes: new Set(), credentialStrength: 'static' } });
  const r = await authenticate([staticKeys, later], bearer(KEY));
  assert.ok(r.ok);
  assert.equal(r.principal.id, 'agent-a');
  assert.equal(r.verifier, 'static_key');
  assert.equal(later.calls, 0);
});

test('a recognised but bad credential is final: later verifiers never run', async () => {
  const later = spy('later', { ok: true, principal: { id: 'x', scopes: new Set(), credentialStrength: 'static' } });
  const r = await authenticate([staticKeys, later], bearer('wrong-key'));
  assert.deepEqual(r, { ok: false, code: 'bad_credential', verifier: 'static_key' });
  assert.equal(later.calls, 0);
});

test('verifiers that do not recognise the credential pass it on', async () => {
  const jwtLike = spy('jwt', {
    ok: true,
    principal: { id: 'j', scopes: new Set(), credentialStrength: 'short_lived' },
  });
  const r = await authenticate([staticKeys, jwtLike], bearer('a.b.c'));
  assert.ok(r.ok);
  assert.equal(r.verifier, 'jwt');
});

const cases: [string, readonly Verifier[], AuthRequest, string][] = [
  ['no verifiers, no credential', [], { headers: {} }, 'no_credential'],
  ['no verifiers, a credential', [], bearer(KEY), 'bad_credential'],
  ['credential nobody recognises is bad, not absent', [staticKeys, anonymous], bearer('a.b.c'), 'bad_credential'],
  [
    'unknown scheme with anonymous on is bad',
    [staticKeys, anonymous],
    { headers: { authorization: 'Basic dTpw' } },
    'bad_credential',
  ],
  ['empty Authorization with anonymous on is bad', [anonymous], { headers: { authorization: '' } }, 'bad_credential'],
  [
    'X-Api-Key while not enabled is bad, not anonymous',
    [staticKeys, anonymous],
    { headers: { 'x-api-key': KEY } },
    'bad_credential',
  ],
  ['no credential and anonymous off', [staticKeys], { headers: {} }, 'no_credential'],
];
for (const [name, verifiers, req, code] of cases) {
  test(`chain: ${name} → ${code}`, async () => {
    const r = await authenticate(verifiers, req);
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.code, code);
  });
}

test('anonymous: a request without any credential becomes the anonymous principal', async () => {
  const r = await authenticate([staticKeys, anonymous], { headers: {} });
  assert.ok(r.ok);
  assert.equal(r.principal.id, 'anonymous');
  assert.equal(r.principal.credentialStrength, 'anonymous');
  assert.deepEqual([...r.principal.scopes], ['public.read']);
});

test('a verifier that throws fails closed', async () => {
  const throwing: Verifier = { name: 'broken', verify: () => Promise.reject(new Error('secret detail')) };
  const r = await authenticate([throwing, anonymous], { headers: {} });
  assert.deepEqual(r, { ok: false, code: 'bad_credential', verifier: 'broken' });
});

test('a verifier that throws before answering fails closed too', async () => {
  const throwing: Verifier = {
    name: 'broken',
    verify: () => {
      throw new Error('secret detail');
    },
  };
  assert.deepEqual(authenticate([throwing, anonymous], { headers: {} }), {
    ok: false,
    code: 'bad_credential',
    verifier: 'broken',
  });
});

test('verifiers that answer at once decide at once: a static key or anonymous access costs no promise', () => {
  const r = authenticate([staticKeys, anonymous], bearer(KEY));
  assert.ok(!(r instanceof Promise));
  assert.ok(r.ok);
  assert.equal(r.principal.id, 'agent-a');
  const anon = authenticate([staticKeys, anonymous], { headers: {} });
  assert.ok(!(anon instanceof Promise));
  assert.ok(anon.ok);
  assert.equal(anon.principal.id, 'anonymous');
});

test('after a verifier that answers later passes, the next one still decides', async () => {
  const passing = spy('later', { ok: false, code: 'no_credential' });
  const pending = authenticate([passing, staticKeys], bearer(KEY));
  assert.ok(pending instanceof Promise);
  const r = await pending;
  assert.ok(r.ok);
  assert.equal(r.verifier, 'static_key');
  assert.equal(passing.calls, 1);
});
