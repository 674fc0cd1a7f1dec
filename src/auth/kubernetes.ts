/**
 * Projected ServiceAccount tokens, as the cluster issues them to Pods. A
 * bearer JWT whose `iss` is the cluster's issuer is this verifier's (any
 * other is left to the next one); it must then carry a signature from the
 * cluster's keys, the audience the policy names (and never the API server's
 * own, so a token that works against the API server is never accepted here),
 * a live `exp`/`nbf`, and a `sub` of the form the API server uses,
 * `system:serviceaccount:<namespace>:<name>`, agreeing with its
 * `kubernetes.io` claim. With a token reviewer, the API server must also
 * still stand behind it (its Pod not deleted).
 *
 * The principal's scopes are the groups Kubernetes gives a ServiceAccount,
 * `system:serviceaccounts` and `system:serviceaccounts:<namespace>`, so a
 * `*` grant row with that scope grants a whole namespace (docs/authentication.md).
 */
import { createHash } from 'node:crypto';
import { decodeJwt, jwtVerify } from 'jose';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import { Lru } from '../bounded/lru.ts';
import { SERVICE_ACCOUNTS_SCOPE } from '../config/policy/grant-row.ts';
import { isRecord } from '../json/record.ts';
import { isJwtShaped, readCredential } from './credentials.ts';
import { makePrincipal } from './principal.ts';
import type { TokenReviewer } from './token-review.ts';
import { tokenFailure } from './token-problems.ts';
import type { CredentialProblem, Principal, Verifier, VerifyResult } from './types.ts';

export interface KubernetesVerifierOptions {
  readonly issuer: string;
  readonly audience: readonly string[];
  readonly keys: JWTVerifyGetKey;
  readonly clockSkewSeconds: number;
  readonly reviewer?: TokenReviewer;
  /**
   * How long a token that verified (and passed review) is taken again without
   * checking its signature or asking again: never past its `exp`. An agent
   * sends the same token for its lifetime, and a signature check costs more
   * than the rest of the request; the TokenReview cache bound is the natural
   * value, since a revoked token may be accepted that long anyway.
   */
  readonly acceptedCacheMs: number;
  /** For tests: the verifier's notion of now. */
  readonly now?: () => Date;
}

/** What the API server signs ServiceAccount tokens with (RS256 by default, ES256 with an EC key). */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'];
/** DNS-1123 subdomain, what a namespace or ServiceAccount name is. */
const NAME = '[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?';
const SUBJECT = new RegExp(`^system:serviceaccount:(${NAME}):(${NAME})$`);

/** Distinct agents' tokens held at once; each entry is a digest and a frozen principal. */
const ACCEPTED_MAX_ENTRIES = 10_000;
const digest = (token: string): string => createHash('sha256').update(token).digest('base64url');

const NOT_MINE: VerifyResult = Object.freeze({ ok: false, code: 'no_credential' });
const UNAVAILABLE: VerifyResult = Object.freeze({ ok: false, code: 'unavailable' });
const bad = (problem: CredentialProblem): VerifyResult => ({ ok: false, code: 'bad_credential', problem });

function issuerOf(token: string): unknown {
  try {
    return decodeJwt(token).iss;
  } catch {
    return undefined;
  }
}

export function createKubernetesVerifier(options: KubernetesVerifierOptions): Verifier {
  const now = options.now ?? (() => new Date());
  const accepted = new Lru<string, { principal: Principal; until: number }>(ACCEPTED_MAX_ENTRIES);

  /** `key` is the token's digest, the accepted cache's key. */
  async function verify(token: string, key: string): Promise<VerifyResult> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, options.keys, {
        issuer: options.issuer,
        audience: [...options.audience],
        algorithms: ALGORITHMS,
        clockTolerance: options.clockSkewSeconds,
        requiredClaims: ['exp', 'sub'],
        currentDate: now(),
      }));
    } catch (err) {
      const failure = tokenFailure(err);
      return failure.kind === 'unavailable' ? UNAVAILABLE : bad(failure.problem);
    }
    const audiences = typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []);
    if (audiences.includes(options.issuer)) return bad('wrong_audience');
    const subject = SUBJECT.exec(payload.sub ?? '');
    const k8s = payload['kubernetes.io'];
    if (
      subject === null ||
      !isRecord(k8s) ||
      k8s.namespace !== subject[1] ||
      !isRecord(k8s.serviceaccount) ||
      k8s.serviceaccount.name !== subject[3]
    ) {
      return bad('malformed');
    }
    const id = payload.sub as string;
    if (options.reviewer !== undefined) {
      const outcome = await options.reviewer.review(token, id, (payload.exp as number) * 1000);
      if (outcome === 'unavailable') return UNAVAILABLE;
      if (outcome === 'rejected') return bad('revoked');
    }
    const principal = makePrincipal(
      id,
      [SERVICE_ACCOUNTS_SCOPE, `${SERVICE_ACCOUNTS_SCOPE}:${subject[1]}`],
      'short_lived',
      payload,
    );
    if (options.acceptedCacheMs > 0)
      accepted.set(key, {
        principal,
        until: Math.min(now().getTime() + options.acceptedCacheMs, (payload.exp as number) * 1000),
      });
    return { ok: true, principal };
  }

  return {
    name: 'kubernetes',
    verify(req): Promise<VerifyResult> {
      const cred = readCredential(req);
      if (cred.kind !== 'bearer' || !isJwtShaped(cred.token)) return Promise.resolve(NOT_MINE);
      const key = digest(cred.token);
      const hit = accepted.get(key);
      if (hit !== undefined && hit.until > now().getTime())
        return Promise.resolve({ ok: true, principal: hit.principal });
      if (issuerOf(cred.token) !== options.issuer) return Promise.resolve(NOT_MINE);
      return verify(cred.token, key);
    },
  };
}
