import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authenticate } from '../../../src/auth/chain.ts';
import { buildVerifiers } from '../../../src/auth/from-policy.ts';
import { loadPolicyFile } from '../../../src/config/policy/policy.ts';
import { AUDIENCE, ISSUER, bearer, keyPair, sign } from './fixtures.ts';

test('a policy file with every verifier builds a chain that authenticates each credential kind', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tg-auth-'));
  const key = await keyPair('k1');
  await writeFile(join(dir, 'jwks.json'), JSON.stringify({ keys: [key.publicJwk] }));
  await writeFile(
    join(dir, 'keys.yaml'),
    `keys: [{sha256: ${createHash('sha256').update('static-secret').digest('hex')}, principal: agent-s}]`,
  );
  await writeFile(
    join(dir, 'policy.yaml'),
    `
authentication:
  staticKeys: {file: keys.yaml, apiKeyHeader: true}
  jwt: {issuer: "${ISSUER}", audience: "${AUDIENCE}", jwksFile: jwks.json, oneTime: {claim: once}}
  anonymous: {enabled: true, scopes: [public]}
`,
  );
  const policy = await loadPolicyFile(join(dir, 'policy.yaml'));
  assert.ok(policy.ok, JSON.stringify(!policy.ok && policy.errors));
  const built = await buildVerifiers(policy.policy.authentication);
  assert.ok(built.ok, JSON.stringify(!built.ok && built.errors));
  assert.deepEqual(
    built.verifiers.map((v) => v.name),
    ['static_key', 'jwt', 'anonymous'],
  );

  const strength = async (req: Parameters<typeof authenticate>[1]) => {
    const r = await authenticate(built.verifiers, req);
    return r.ok ? `${r.principal.id}/${r.principal.credentialStrength}` : r.code;
  };
  assert.equal(await strength(bearer('static-secret')), 'agent-s/static');
  assert.equal(await strength({ headers: { 'x-api-key': 'static-secret' } }), 'agent-s/static');
  assert.equal(await strength(bearer(await sign({ key }))), 'agent-1/short_lived');
  const once = await sign({ key, claims: { once: true, jti: 'j' } });
  assert.equal(await strength(bearer(once)), 'agent-1/one_time');
  assert.equal(await strength(bearer(once)), 'bad_credential');
  assert.equal(await strength({ headers: {} }), 'anonymous/anonymous');
  assert.equal(await strength(bearer('wrong')), 'bad_credential');
});

test('missing key and JWKS files are reported under their policy paths', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tg-auth-'));
  await writeFile(
    join(dir, 'policy.yaml'),
    `
authentication:
  staticKeys: {file: absent.yaml}
  jwt: {issuer: i, audience: a, jwksFile: absent.json}
`,
  );
  const policy = await loadPolicyFile(join(dir, 'policy.yaml'));
  assert.ok(policy.ok);
  const built = await buildVerifiers(policy.policy.authentication);
  assert.ok(!built.ok);
  assert.deepEqual(
    built.errors.map((e) => e.path),
    ['/authentication/staticKeys/file', '/authentication/jwt/jwksFile'],
  );
  assert.ok(built.errors.every((e) => /ENOENT/.test(e.message)));
});

test('no verifiers configured: nothing authenticates', async () => {
  const built = await buildVerifiers({
    resourceMetadataUrl: undefined,
    staticKeys: undefined,
    jwt: undefined,
    kubernetes: undefined,
    anonymous: { enabled: false, scopes: [] },
  });
  assert.ok(built.ok);
  assert.deepEqual(await authenticate(built.verifiers, { headers: {} }), {
    ok: false,
    code: 'no_credential',
    verifier: undefined,
  });
});
