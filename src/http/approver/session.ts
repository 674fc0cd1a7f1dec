/**
 * Approver sessions and CSRF tokens, stateless so any replica with the same
 * approval secret accepts them. The session cookie is an HMAC-signed
 * statement {approver id, scopes, expiry, session id}; the CSRF token is an
 * HMAC of the session id (session-bound, so a token from another session, or
 * none, fails). Comparisons are constant-time.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { signPayload, verifiedPayload } from '../../auth/signed-payload.ts';
import { isPrincipalId, isScope } from '../../config/policy/grant-row.ts';
import type { Approver } from '../../approval/approvals.ts';

/** An approver signs in again after this long. */
export const SESSION_SECONDS = 3600;
export const SESSION_COOKIE = 'tg_approver';
/** Set with the sign-in form, so the sign-in post carries a token bound to this browser (login CSRF). */
export const LOGIN_COOKIE = 'tg_login';

export interface Session extends Approver {
  /** Random per sign-in; CSRF tokens are bound to it. */
  readonly sid: string;
}

export function issueSession(key: Buffer, approver: Approver, now: number): string {
  return signPayload(key, {
    sub: approver.id,
    sc: [...approver.scopes],
    exp: now + SESSION_SECONDS * 1000,
    sid: randomBytes(16).toString('base64url'),
  });
}

export function readSession(key: Buffer, value: string | undefined, now: number): Session | undefined {
  const v = value === undefined ? undefined : verifiedPayload(key, value);
  if (typeof v !== 'object' || v === null) return undefined;
  const { sub, sc, exp, sid } = v as Record<string, unknown>;
  if (
    !isPrincipalId(sub) ||
    !Array.isArray(sc) ||
    !sc.every(isScope) ||
    typeof exp !== 'number' ||
    exp <= now ||
    typeof sid !== 'string'
  )
    return undefined;
  return { id: sub, scopes: new Set(sc), sid };
}

/** The CSRF token for a session id (or a sign-in cookie, or a trusted-header identity). */
export function csrfToken(key: Buffer, bound: string): string {
  return mac(key, `csrf\u0000${bound}`);
}

export function csrfValid(key: Buffer, bound: string, given: string | undefined): boolean {
  return given !== undefined && same(given, csrfToken(key, bound));
}

export function newLoginNonce(): string {
  return randomBytes(16).toString('base64url');
}

/** Cookie attributes: never readable by script, never sent cross-site, only over HTTPS (browsers treat http://localhost and 127.0.0.1 as secure). */
export function cookie(name: string, value: string, maxAgeSeconds: number): string {
  return `${name}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=Strict`;
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function mac(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('base64url');
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
