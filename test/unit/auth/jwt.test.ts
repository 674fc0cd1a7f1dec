import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, UnsecuredJWT, base64url } from 'jose';
import { createJwtVerifier } from '../../../src/auth/jwt.ts';
import type { JwtVerifierOptions } from '../../../src/auth/jwt.ts';
import { jwksFromFile, jwksFromText, jwksFromUrl } from '../../../src/auth/jwks.ts';
import { DEFAULT_JWT_ALGORITHMS } from '../../../src/config/policy/policy.ts';
import type { Verifier } from '../../../src/auth/types.ts';
import { AUDIENCE, ISSUER, bearer, keyPair, sign } from './fixtures.ts';
import type { KeyPair } from './fixtures.ts';

let es: KeyPair;
let rs: KeyPair;
let stranger: KeyPair;
let fileVerifier: Verifier;
let server: Server;
let jwksUrl: string;
let jwksHits = 0;

before(async () => {
  es = await keyPair('es-1', 'ES256');
  rs = await keyPair('rs-1', 'RS256');
  stranger = await keyPair('es-1', 'ES256');
  const dir = await mkdtemp(join(tmpdir(), 'tg-jwks-'));
  const file = join(dir, 'jwks.json');
  await writeFile(file, JSON.stringify({ keys: [es.publicJwk, rs.publicJwk] }));
  const keys = await jwksFromFile(file);
  assert.ok(keys.ok);
  fileVerifier = createJwtVerifier({
    issuer: ISSUER,
    audience: AUDIENCE,
    keys: keys.keys,
    algorithms: DEFAULT_JWT_ALGORITHMS,
  });

  server = createServer((_req, res) => {
    jwksHits++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [es.publicJwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function expectOk(v: Verifier, token: string) {
  const r = await v.verify(bearer(token));
  assert.ok(r.ok, 'expected the token to verify');
  return r.principal;
}

async function expectBad(v: Verifier, token: string) {
  assert.deepEqual(await v.verify(bearer(token)), { ok: false, code: 'bad_credential' });
}

test('a valid ES256 token from a JWKS file: principal from sub, scopes from scope', async () => {
  const p = await expectOk(fileVerifier, await sign({ key: es, claims: { scope: 'files.read  files.write' } }));
  assert.equal(p.id, 'agent-1');
  assert.equal(p.credentialStrength, 'short_lived');
  assert.deepEqual([...p.scopes].sort(), ['files.read', 'files.write']);
});

test('an RS256 token verifies against the RSA key of the same set', async () => {
  await expectOk(fileVerifier, await sign({ key: rs }));
});

test('scp as an array and as a string, merged with scope', async () => {
  const a = await expectOk(fileVerifier, await sign({ key: es, claims: { scp: ['a', 'b'] } }));
  assert.deepEqual([...a.scopes].sort(), ['a', 'b']);
  const b = await expectOk(fileVerifier, await sign({ key: es, claims: { scp: 'c d', scope: 'a' } }));
  assert.deepEqual([...b.scopes].sort(), ['a', 'c', 'd']);
});

test('audience may be one of several configured', async () => {
  const keys = jwksFromText(JSON.stringify({ keys: [es.publicJwk] }));
  assert.ok(keys.ok);
  const v = createJwtVerifier({
    issuer: [ISSUER, 'https://other/'],
    audience: ['x', AUDIENCE],
    keys: keys.keys,
    algorithms: ['ES256'],
  });
  await expectOk(v, await sign({ key: es, issuer: 'https://other/' }));
});

const rejections: [string, () => Promise<string>][] = [
  ['wrong issuer', () => sign({ key: es, issuer: 'https://evil/' })],
  ['wrong audience', () => sign({ key: es, audience: 'https://other-mcp/' })],
  ['expired beyond the 30 s skew', () => sign({ key: es, expiresIn: -31 - 5 })],
  ['not valid before, beyond the skew', () => sign({ key: es, notBeforeIn: 120 })],
  ['no exp', () => sign({ key: es, expiresIn: null })],
  ['no sub', () => sign({ key: es, subject: undefined })],
  ['sub "*"', () => sign({ key: es, subject: '*' })],
  ['sub with a newline', () => sign({ key: es, subject: 'a\nb' })],
  ['scope not a string', () => sign({ key: es, claims: { scope: ['a'] } })],
  ['scp with a non-string', () => sign({ key: es, claims: { scp: ['a', 1] } })],
  ['signed by an unknown key with a known kid', () => sign({ key: stranger })],
  [
    'alg none',
    async () =>
      new UnsecuredJWT({ sub: 'agent-1' }).setIssuer(ISSUER).setAudience(AUDIENCE).setExpirationTime('5m').encode(),
  ],
  [
    'HS256 when only asymmetric algorithms are allowed',
    () =>
      new SignJWT({ sub: 'agent-1' })
        .setProtectedHeader({ alg: 'HS256', kid: 'es-1' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime('5m')
        .sign(new Uint8Array(32).fill(7)),
  ],
  [
    'signature of another token spliced on',
    async () => {
      const good = await sign({ key: es });
      const other = await sign({ key: es, subject: 'admin' });
      const [h, , s] = good.split('.');
      return `${h}.${other.split('.')[1]}.${s}`;
    },
  ],
  ['garbage in JWT shape', async () => 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.AAAA'],
];
for (const [name, make] of rejections) {
  test(`JWT refused: ${name}`, async () => expectBad(fileVerifier, await make()));
}

test('expired within the clock skew is still accepted; skew is configurable', async () => {
  const token = await sign({ key: es, expiresIn: -10 });
  await expectOk(fileVerifier, token);
  const keys = jwksFromText(JSON.stringify({ keys: [es.publicJwk] }));
  assert.ok(keys.ok);
  await expectBad(
    createJwtVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      keys: keys.keys,
      algorithms: ['ES256'],
      clockSkewSeconds: 0,
    }),
    token,
  );
});

test('tokens not shaped as a JWT are left to other verifiers', async () => {
  assert.deepEqual(await fileVerifier.verify(bearer('opaque-static-key')), { ok: false, code: 'no_credential' });
  assert.deepEqual(await fileVerifier.verify({ headers: {} }), { ok: false, code: 'no_credential' });
  assert.deepEqual(await fileVerifier.verify({ headers: { 'x-api-key': 'a.b.c' } }), {
    ok: false,
    code: 'no_credential',
  });
});

test('JWKS from a URL served on 127.0.0.1: verifies, and caches the set', async () => {
  const keys = jwksFromUrl(jwksUrl, { timeoutMs: 2000, cooldownMs: 30_000, cacheMaxAgeMs: 600_000 });
  assert.ok(keys.ok);
  const v = createJwtVerifier({
    issuer: ISSUER,
    audience: AUDIENCE,
    keys: keys.keys,
    algorithms: DEFAULT_JWT_ALGORITHMS,
  });
  const before = jwksHits;
  await expectOk(v, await sign({ key: es, claims: { scope: 'a' } }));
  await expectOk(v, await sign({ key: es }));
  assert.equal(jwksHits - before, 1);
  await expectBad(v, await sign({ key: rs }));
});

test('an unreachable JWKS URL refuses the token instead of throwing', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const keys = jwksFromUrl(`http://127.0.0.1:${port}/jwks`, { timeoutMs: 500, cooldownMs: 0, cacheMaxAgeMs: 1000 });
  assert.ok(keys.ok);
  await expectBad(
    createJwtVerifier({ issuer: ISSUER, audience: AUDIENCE, keys: keys.keys, algorithms: ['ES256'] }),
    await sign({ key: es }),
  );
});

test('HS256 works only when listed explicitly, with an oct key of at least 256 bits', async () => {
  const secret = new Uint8Array(32).fill(9);
  const short = new Uint8Array(16).fill(3);
  const keys = jwksFromText(
    JSON.stringify({
      keys: [
        { kty: 'oct', kid: 'hs-1', alg: 'HS256', k: base64url.encode(secret) },
        { kty: 'oct', kid: 'hs-short', alg: 'HS256', k: base64url.encode(short) },
        es.publicJwk,
      ],
    }),
  );
  assert.ok(keys.ok);
  const hs = (kid: string, key: Uint8Array) =>
    new SignJWT({ sub: 'agent-hs' })
      .setProtectedHeader({ alg: 'HS256', kid })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .sign(key);
  const opts: JwtVerifierOptions = {
    issuer: ISSUER,
    audience: AUDIENCE,
    keys: keys.keys,
    algorithms: ['HS256', 'ES256'],
  };
  const explicit = createJwtVerifier(opts);
  assert.equal((await expectOk(explicit, await hs('hs-1', secret))).id, 'agent-hs');
  await expectOk(explicit, await sign({ key: es }));
  await expectBad(explicit, await hs('hs-short', short));
  await expectBad(createJwtVerifier({ ...opts, algorithms: DEFAULT_JWT_ALGORITHMS }), await hs('hs-1', secret));
  await expectBad(
    createJwtVerifier({ ...opts, algorithms: ['none', 'ES256'] }),
    new UnsecuredJWT({ sub: 'x' }).setIssuer(ISSUER).setAudience(AUDIENCE).setExpirationTime('5m').encode(),
  );
});

test('jwksFromText rejects what is not a key set', () => {
  for (const text of ['', 'nope', '[]', '{"keys": 1}', '{"keys": [1]}', '{"keys": [{"kty": "oct"}]}']) {
    assert.equal(jwksFromText(text).ok, false, text);
  }
});
