/**
 * JWT bearer tokens (short-lived) and one-time tokens, verified with jose.
 * Issuer, audience, expiry and not-before are always checked (with a small
 * clock skew); algorithms are an allow-list without `none`. A token marked
 * one-time (by issuer or by claim) must carry `jti` and `exp`, and its `jti`
 * is claimed in the replay store after the signature checks out, so forged
 * tokens cannot burn ids and a replay is refused.
 */
import { jwtVerify } from 'jose';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import { isPrincipalId } from '../config/policy/grant-row.ts';
import { isServiceAccountScope, WILDCARD } from '../config/policy/grant-row.ts';
import { isJwtShaped, readCredential } from './credentials.ts';
import { makePrincipal } from './principal.ts';
import type { ClaimResult, ReplayStore } from './replay-store.ts';
import type { Verifier, VerifyResult } from './types.ts';

export interface OneTimeOptions {
  /** Tokens from these issuers are one-time (they are accepted as issuers too). */
  readonly issuers?: readonly string[];
  /** Tokens whose claim of this name is `true` are one-time. */
  readonly claim?: string;
  readonly store: ReplayStore;
  /** A one-time token may live at most this long from `iat` (or from now). */
  readonly maxLifetimeSeconds?: number;
}

export interface JwtVerifierOptions {
  readonly issuer: string | readonly string[];
  readonly audience: string | readonly string[];
  readonly keys: JWTVerifyGetKey;
  readonly algorithms: readonly string[];
  readonly clockSkewSeconds?: number;
  readonly oneTime?: OneTimeOptions;
  /** For tests: the verifier's notion of now. */
  readonly now?: () => Date;
}

/** Most scopes read from one token; more is treated as malformed. */
const MAX_TOKEN_SCOPES = 256;
const BAD: VerifyResult = Object.freeze({ ok: false, code: 'bad_credential' });
const NOT_MINE: VerifyResult = Object.freeze({ ok: false, code: 'no_credential' });
const UNAVAILABLE: VerifyResult = Object.freeze({ ok: false, code: 'unavailable' });

export function createJwtVerifier(options: JwtVerifierOptions): Verifier {
  const oneTime = options.oneTime;
  const oneTimeIssuers = new Set(oneTime?.issuers ?? []);
  const issuers = [
    ...new Set([...(typeof options.issuer === 'string' ? [options.issuer] : options.issuer), ...oneTimeIssuers]),
  ];
  const audience = typeof options.audience === 'string' ? [options.audience] : [...options.audience];
  const algorithms = options.algorithms.filter((a) => a !== 'none');
  const skew = options.clockSkewSeconds ?? 30;
  const maxLifetime = oneTime?.maxLifetimeSeconds ?? 3600;
  const now = options.now ?? (() => new Date());

  async function verify(token: string): Promise<VerifyResult> {
    const at = now();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, options.keys, {
        issuer: issuers,
        audience,
        algorithms,
        clockTolerance: skew,
        requiredClaims: ['exp', 'sub'],
        currentDate: at,
      }));
    } catch {
      return BAD;
    }
    const sub = payload.sub;
    if (!isPrincipalId(sub) || sub === WILDCARD) return BAD;
    const scopes = readScopes(payload);
    if (scopes === undefined) return BAD;

    const marked = oneTime !== undefined && isOneTime(payload, oneTimeIssuers, oneTime.claim);
    if (marked === undefined) return BAD;
    if (!marked) return { ok: true, principal: makePrincipal(sub, scopes, 'short_lived', payload) };

    const { jti, exp, iat } = payload;
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > 256 || typeof exp !== 'number') return BAD;
    const nowSec = at.getTime() / 1000;
    const start = typeof iat === 'number' ? Math.min(iat, nowSec) : nowSec;
    if (exp - start > maxLifetime + skew) return BAD;
    // Without iat the token may have been issued as early as its lifetime allows.
    const issuedAt = typeof iat === 'number' ? start : exp - maxLifetime - skew;
    let claimed: ClaimResult;
    try {
      // Ids are scoped by issuer; the entry lives as long as the token could still verify.
      claimed = await oneTime.store.claim(JSON.stringify([payload.iss, jti]), (exp + skew) * 1000, issuedAt * 1000);
    } catch {
      claimed = 'unavailable';
    }
    if (claimed === 'claimed') return { ok: true, principal: makePrincipal(sub, scopes, 'one_time', payload) };
    return claimed === 'unavailable' ? UNAVAILABLE : BAD;
  }

  return {
    name: 'jwt',
    verify(req): Promise<VerifyResult> {
      const cred = readCredential(req);
      if (cred.kind !== 'bearer' || !isJwtShaped(cred.token)) return Promise.resolve(NOT_MINE);
      return verify(cred.token);
    },
  };
}

/** `scope` (space-separated string) and `scp` (array or string), merged; undefined when malformed. */
function readScopes(payload: JWTPayload): string[] | undefined {
  const out: string[] = [];
  const scope = payload.scope;
  if (scope !== undefined) {
    if (typeof scope !== 'string') return undefined;
    out.push(...scope.split(' '));
  }
  const scp = payload.scp;
  if (scp !== undefined) {
    if (typeof scp === 'string') out.push(...scp.split(' '));
    else if (Array.isArray(scp) && scp.every((s) => typeof s === 'string')) out.push(...scp);
    else return undefined;
  }
  // Another issuer cannot make its tokens count as a namespace's ServiceAccounts.
  const scopes = out.filter((s) => s.length > 0 && !isServiceAccountScope(s));
  return scopes.length > MAX_TOKEN_SCOPES ? undefined : scopes;
}

/** True/false, or undefined when the marking claim is present but not a boolean (ambiguous: refuse). */
function isOneTime(payload: JWTPayload, issuers: ReadonlySet<string>, claim: string | undefined): boolean | undefined {
  if (typeof payload.iss === 'string' && issuers.has(payload.iss)) return true;
  if (claim === undefined || payload[claim] === undefined) return false;
  const v = payload[claim];
  return typeof v === 'boolean' ? v : undefined;
}
