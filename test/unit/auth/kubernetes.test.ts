/**
 * The `kubernetes` verifier over tokens signed here in the shape the API
 * server issues: which tokens it claims, why it refuses the rest (a closed
 * problem, never the token), the principal and scopes it makes, and how a
 * TokenReview answer is used and cached. The same verifier against a real
 * API server: test/kube/serviceaccount-tokens.test.ts.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createLocalJWKSet } from 'jose';
import type { ApiServer } from '../../../src/auth/api-server.ts';
import { createJwtVerifier } from '../../../src/auth/jwt.ts';
import { createKubernetesVerifier } from '../../../src/auth/kubernetes.ts';
import { tokenReviewer, type TokenReviewer } from '../../../src/auth/token-review.ts';
import { parseStaticKeys } from '../../../src/auth/static-keys.ts';
import { parsePolicy } from '../../../src/config/policy/policy.ts';
import type { Verifier } from '../../../src/auth/types.ts';
import { bearer, keyPair, sign, type KeyPair } from './fixtures.ts';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const AUDIENCE = 'toolgate.test/tickets';
const SUB = 'system:serviceaccount:agents:reader';
const claims = (ns = 'agents', sa = 'reader') => ({
  'kubernetes.io': { namespace: ns, serviceaccount: { name: sa, uid: 'u-1' }, pod: { name: 'reader-0', uid: 'p-1' } },
});

let key: KeyPair;
let other: KeyPair;
const verifierWith = (reviewer?: TokenReviewer, acceptedCacheMs = 0, now?: () => Date): Verifier =>
  createKubernetesVerifier({
    issuer: ISSUER,
    audience: [AUDIENCE],
    keys: createLocalJWKSet({ keys: [key.publicJwk] }),
    clockSkewSeconds: 30,
    acceptedCacheMs,
    ...(reviewer !== undefined && { reviewer }),
    ...(now !== undefined && { now }),
  });
const token = (o: Partial<Parameters<typeof sign>[0]> = {}) =>
  sign({ key, issuer: ISSUER, audience: AUDIENCE, subject: SUB, claims: claims(), ...o });

before(async () => {
  key = await keyPair('cluster-1', 'RS256');
  other = await keyPair('cluster-1', 'RS256');
});

describe('the kubernetes verifier', () => {
  it('makes the ServiceAccount’s principal, with its Kubernetes groups as scopes and the token’s claims', async () => {
    const r = await verifierWith().verify(bearer(await token()));
    assert.ok(r.ok);
    assert.equal(r.principal.id, SUB);
    assert.deepEqual([...r.principal.scopes], ['system:serviceaccounts', 'system:serviceaccounts:agents']);
    assert.equal(r.principal.credentialStrength, 'short_lived');
    assert.deepEqual((r.principal.claims as any)['kubernetes.io'].pod.name, 'reader-0');
  });

  it('leaves tokens of other issuers, opaque keys and anonymous callers to the next verifier', async () => {
    const v = verifierWith();
    assert.deepEqual(await v.verify(bearer(await token({ issuer: 'https://idp.test/' }))), {
      ok: false,
      code: 'no_credential',
    });
    assert.deepEqual(await v.verify(bearer('an-opaque-static-key')), { ok: false, code: 'no_credential' });
    assert.deepEqual(await v.verify({ headers: {} }), { ok: false, code: 'no_credential' });
  });

  const refusals: [string, () => Promise<string>, string][] = [
    ['expired', () => token({ expiresIn: -120 }), 'expired'],
    ['not yet valid', () => token({ notBeforeIn: 600 }), 'not_yet_valid'],
    ['for another audience', () => token({ audience: 'someone-else' }), 'wrong_audience'],
    [
      'for the API server (its issuer as audience)',
      () => sign({ key, issuer: ISSUER, audience: ISSUER, subject: SUB, claims: claims() }),
      'wrong_audience',
    ],
    ['signed by another cluster’s key under the same issuer', () => token({ key: other }), 'untrusted_signer'],
    ['a subject that is not a ServiceAccount', () => token({ subject: 'alice' }), 'malformed'],
    ['a kubernetes.io claim for another namespace', () => token({ claims: claims('other') }), 'malformed'],
    [
      'a kubernetes.io claim for another ServiceAccount',
      () => token({ claims: claims('agents', 'writer') }),
      'malformed',
    ],
    ['no kubernetes.io claim', () => token({ claims: {} }), 'malformed'],
  ];
  for (const [what, make, problem] of refusals) {
    it(`refuses a token ${what} as ${problem}`, async () => {
      assert.deepEqual(await verifierWith().verify(bearer(await make())), {
        ok: false,
        code: 'bad_credential',
        problem,
      });
    });
  }

  it('asks the reviewer once the token verifies, and refuses what it no longer stands behind', async () => {
    const asked: string[] = [];
    const answer = (outcome: 'authenticated' | 'rejected' | 'unavailable'): TokenReviewer => ({
      review: async (_t, user) => {
        asked.push(user);
        return outcome;
      },
    });
    assert.ok((await verifierWith(answer('authenticated')).verify(bearer(await token()))).ok);
    assert.deepEqual(await verifierWith(answer('rejected')).verify(bearer(await token())), {
      ok: false,
      code: 'bad_credential',
      problem: 'revoked',
    });
    assert.deepEqual(await verifierWith(answer('unavailable')).verify(bearer(await token())), {
      ok: false,
      code: 'unavailable',
    });
    assert.deepEqual(asked, [SUB, SUB, SUB]);
    await verifierWith(answer('authenticated')).verify(bearer(await token({ expiresIn: -120 })));
    assert.equal(asked.length, 3, 'a token that does not verify is never sent to the API server');
  });

  it('takes an accepted token again without a second check, for the cache bound and never past its exp', async () => {
    let at = Date.now();
    let reviews = 0;
    const reviewer: TokenReviewer = {
      review: async () => {
        reviews++;
        return 'authenticated';
      },
    };
    const v = verifierWith(reviewer, 10_000, () => new Date(at));
    const t = await token({ expiresIn: 15 });
    assert.ok((await v.verify(bearer(t))).ok);
    at += 9_000;
    assert.ok((await v.verify(bearer(t))).ok);
    assert.equal(reviews, 1, 'within the bound: taken again');
    at += 2_000;
    assert.ok((await v.verify(bearer(t))).ok);
    assert.equal(reviews, 2, 'past it: checked and reviewed again');
    at += 60_000;
    assert.deepEqual(
      await v.verify(bearer(t)),
      { ok: false, code: 'bad_credential', problem: 'expired' },
      'a cached token still expires',
    );
  });
});

describe('TokenReview', () => {
  /** An ApiServer that answers TokenReviews from a table, counting them. */
  function reviewing(answers: (token: string) => { status: number; body: unknown } | undefined) {
    const calls: unknown[] = [];
    const api: ApiServer = {
      call: async (_m, _p, body) => {
        calls.push(body);
        return answers((body as any).spec.token);
      },
    };
    return { api, calls };
  }
  const authenticated = (username: string) => ({
    status: 201,
    body: { status: { authenticated: true, user: { username } } },
  });

  it('sends the token with the policy’s audiences, and requires the API server to name the same ServiceAccount', async () => {
    const { api, calls } = reviewing(() => authenticated('system:serviceaccount:agents:someone-else'));
    const reviewer = tokenReviewer({ api, audience: [AUDIENCE], cacheSeconds: 10 });
    assert.equal(await reviewer.review('t1', SUB, Date.now() + 60_000), 'rejected');
    assert.deepEqual((calls[0] as any).spec, { token: 't1', audiences: [AUDIENCE] });
  });

  it('caches an answer for cacheSeconds, never past the token’s expiry, and never caches a failure to ask', async () => {
    let now = 1_000_000;
    let answer: { status: number; body: unknown } | undefined = authenticated(SUB);
    const { api, calls } = reviewing(() => answer);
    const reviewer = tokenReviewer({ api, audience: [AUDIENCE], cacheSeconds: 10, now: () => now });
    assert.equal(await reviewer.review('t1', SUB, now + 60_000), 'authenticated');
    answer = { status: 201, body: { status: { authenticated: false, error: 'pod gone' } } };
    now += 9_000;
    assert.equal(
      await reviewer.review('t1', SUB, now + 60_000),
      'authenticated',
      'within the bound: the cached answer',
    );
    now += 2_000;
    assert.equal(await reviewer.review('t1', SUB, now + 60_000), 'rejected', 'past it: asked again');
    assert.equal(calls.length, 2);

    assert.equal(await reviewer.review('t2', SUB, now + 1_000), 'rejected');
    answer = authenticated(SUB);
    now += 1_500;
    assert.equal(
      await reviewer.review('t2', SUB, now + 60_000),
      'authenticated',
      'an answer lives no longer than its token',
    );

    answer = undefined;
    assert.equal(await reviewer.review('t3', SUB, now + 60_000), 'unavailable');
    answer = { status: 403, body: { kind: 'Status', reason: 'Forbidden' } };
    assert.equal(
      await reviewer.review('t3', SUB, now + 60_000),
      'unavailable',
      'missing RBAC says nothing about the token',
    );
    answer = authenticated(SUB);
    assert.equal(await reviewer.review('t3', SUB, now + 60_000), 'authenticated', 'failures to ask are not cached');
  });
});

describe('system:serviceaccounts scopes belong to ServiceAccount tokens alone', () => {
  it('a static key cannot carry them', () => {
    const r = parseStaticKeys(
      `keys:\n  - { sha256: ${'a'.repeat(64)}, principal: bot, scopes: ["system:serviceaccounts:agents"] }\n`,
    );
    assert.ok(!r.ok);
    assert.deepEqual(
      r.errors.map((e) => e.path),
      ['/keys/0/scopes/0'],
    );
  });

  it('a JWT from another issuer loses them, keeping its other scopes', async () => {
    const jwt = createJwtVerifier({
      issuer: 'https://idp.test/',
      audience: AUDIENCE,
      keys: createLocalJWKSet({ keys: [key.publicJwk] }),
      algorithms: ['RS256'],
    });
    const r = await jwt.verify(
      bearer(
        await sign({
          key,
          issuer: 'https://idp.test/',
          audience: AUDIENCE,
          claims: { scope: 'docs system:serviceaccounts:agents system:serviceaccounts' },
        }),
      ),
    );
    assert.ok(r.ok);
    assert.deepEqual([...r.principal.scopes], ['docs']);
  });

  it('nor the anonymous principal', () => {
    const r = parsePolicy(
      'version: 1\nauthentication:\n  anonymous: { enabled: true, scopes: ["system:serviceaccounts"] }\n',
    );
    assert.ok(!r.ok);
    assert.deepEqual(
      r.errors.map((e) => e.path),
      ['/authentication/anonymous/scopes/0'],
    );
  });

  it('and the policy refuses the API server’s own audience', () => {
    for (const audience of [ISSUER, 'https://kubernetes.default.svc', 'kubernetes.default.svc']) {
      const r = parsePolicy(
        `version: 1\nauthentication:\n  kubernetes: { issuer: "${ISSUER}", audience: "${audience}" }\n`,
      );
      assert.ok(!r.ok, audience);
      assert.deepEqual(
        r.errors.map((e) => e.path),
        ['/authentication/kubernetes/audience'],
      );
    }
    assert.ok(
      parsePolicy(`version: 1\nauthentication:\n  kubernetes: { issuer: "${ISSUER}", audience: "${AUDIENCE}" }\n`).ok,
    );
  });
});
