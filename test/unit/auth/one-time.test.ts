import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createJwtVerifier } from '../../../src/auth/jwt.ts';
import type { OneTimeOptions } from '../../../src/auth/jwt.ts';
import { jwksFromText } from '../../../src/auth/jwks.ts';
import { MemoryReplayStore } from '../../../src/auth/replay-store.ts';
import type { ReplayStore } from '../../../src/auth/replay-store.ts';
import type { JWTVerifyGetKey } from 'jose';
import { AUDIENCE, ISSUER, bearer, keyPair, sign } from './fixtures.ts';
import type { KeyPair } from './fixtures.ts';

const ONE_TIME_ISSUER = 'https://approvals.test/';
let key: KeyPair;
let forger: KeyPair;
let keys: JWTVerifyGetKey;

before(async () => {
  key = await keyPair('k1');
  forger = await keyPair('k1');
  const k = jwksFromText(JSON.stringify({ keys: [key.publicJwk] }));
  assert.ok(k.ok);
  keys = k.keys;
});

function verifier(oneTime: Partial<OneTimeOptions> = {}) {
  return createJwtVerifier({
    issuer: ISSUER,
    audience: AUDIENCE,
    keys,
    algorithms: ['ES256'],
    oneTime: { claim: 'toolgate_one_time', issuers: [ONE_TIME_ISSUER], store: new MemoryReplayStore(), ...oneTime },
  });
}

test('claim-marked token: first use is one_time, the replay is refused', async () => {
  const v = verifier();
  const token = await sign({ key, claims: { toolgate_one_time: true, jti: 'j-1', scope: 'approve' } });
  const first = await v.verify(bearer(token));
  assert.ok(first.ok);
  assert.equal(first.principal.credentialStrength, 'one_time');
  assert.deepEqual([...first.principal.scopes], ['approve']);
  assert.deepEqual(await v.verify(bearer(token)), { ok: false, code: 'bad_credential' });
});

test('a different token reusing the same jti is a replay too', async () => {
  const v = verifier();
  assert.ok((await v.verify(bearer(await sign({ key, claims: { toolgate_one_time: true, jti: 'same' } })))).ok);
  const again = await sign({ key, claims: { toolgate_one_time: true, jti: 'same', scope: 'other' } });
  assert.equal((await v.verify(bearer(again))).ok, false);
});

test('issuer-marked token: one-time without any claim, and the issuer is accepted', async () => {
  const v = verifier();
  const token = await sign({ key, issuer: ONE_TIME_ISSUER, claims: { jti: 'j-iss' } });
  const r = await v.verify(bearer(token));
  assert.ok(r.ok);
  assert.equal(r.principal.credentialStrength, 'one_time');
  assert.equal((await v.verify(bearer(token))).ok, false);
});

test('same jti under two issuers are different tokens', async () => {
  const v = verifier();
  assert.ok((await v.verify(bearer(await sign({ key, issuer: ONE_TIME_ISSUER, claims: { jti: 'shared' } })))).ok);
  assert.ok((await v.verify(bearer(await sign({ key, claims: { toolgate_one_time: true, jti: 'shared' } })))).ok);
});

test('unmarked tokens stay short-lived and replayable', async () => {
  const v = verifier();
  const token = await sign({ key, claims: { jti: 'plain', toolgate_one_time: false } });
  for (let i = 0; i < 2; i++) {
    const r = await v.verify(bearer(token));
    assert.ok(r.ok);
    assert.equal(r.principal.credentialStrength, 'short_lived');
  }
});

const refused: [string, () => Promise<string>][] = [
  ['no jti', () => sign({ key, claims: { toolgate_one_time: true } })],
  ['empty jti', () => sign({ key, claims: { toolgate_one_time: true, jti: '' } })],
  ['marking claim not a boolean', () => sign({ key, claims: { toolgate_one_time: 'true', jti: 'x1' } })],
  ['lifetime beyond the maximum', () => sign({ key, claims: { toolgate_one_time: true, jti: 'x2' }, expiresIn: 7200 })],
];
for (const [name, make] of refused) {
  test(`one-time token refused: ${name}`, async () => {
    assert.deepEqual(await verifier().verify(bearer(await make())), { ok: false, code: 'bad_credential' });
  });
}

test("a forged token does not burn the genuine token's jti", async () => {
  const v = verifier();
  const forged = await sign({ key: forger, claims: { toolgate_one_time: true, jti: 'victim' } });
  assert.equal((await v.verify(bearer(forged))).ok, false);
  assert.ok((await v.verify(bearer(await sign({ key, claims: { toolgate_one_time: true, jti: 'victim' } })))).ok);
});

test('a failing replay store fails closed, as retryable rather than as a bad credential', async () => {
  const broken: ReplayStore = { claim: () => Promise.reject(new Error('store down')) };
  const r = await verifier({ store: broken }).verify(
    bearer(await sign({ key, claims: { toolgate_one_time: true, jti: 'x3' } })),
  );
  assert.deepEqual(r, { ok: false, code: 'unavailable' });
  const unsure: ReplayStore = { claim: () => Promise.resolve('unavailable') };
  const u = await verifier({ store: unsure }).verify(
    bearer(await sign({ key, claims: { toolgate_one_time: true, jti: 'x3b' } })),
  );
  assert.deepEqual(u, { ok: false, code: 'unavailable' });
});

test('the store is asked to remember the id until exp plus skew', async () => {
  const calls: [string, number][] = [];
  const spy: ReplayStore = {
    claim: (jti, exp) => {
      calls.push([jti, exp]);
      return Promise.resolve('claimed');
    },
  };
  const token = await sign({ key, claims: { toolgate_one_time: true, jti: 'x4' }, expiresIn: 60 });
  const exp = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()).exp as number;
  assert.ok((await verifier({ store: spy }).verify(bearer(token))).ok);
  assert.deepEqual(calls, [[JSON.stringify([ISSUER, 'x4']), (exp + 30) * 1000]]);
});
