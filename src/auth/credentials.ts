/**
 * Reads the credential a request carries, without judging it. Exactly one
 * place decides what counts as "a credential was presented", so the chain and
 * the anonymous verifier can never disagree about it.
 */
import type { AuthRequest } from './types.ts';

export type Credential =
  | { readonly kind: 'none' }
  | { readonly kind: 'bearer'; readonly token: string }
  | { readonly kind: 'api_key'; readonly token: string }
  /** Something credential-like that no verifier may accept: repeated, unknown scheme, or both headers. */
  | { readonly kind: 'malformed' };

/** Longest token looked at; longer ones are refused unread. */
const MAX_TOKEN_LENGTH = 16 * 1024;

const API_KEY_HEADER = 'x-api-key';

// RFC 6750 allows one or more spaces after the scheme; the token itself is
// visible ASCII with no spaces.
const BEARER = /^bearer +([\x21-\x7e]+) *$/i;
const TOKEN = /^[\x21-\x7e]+$/;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const NONE: Credential = Object.freeze({ kind: 'none' });
const MALFORMED: Credential = Object.freeze({ kind: 'malformed' });

export function readCredential(req: AuthRequest): Credential {
  const auth = req.authorization ?? req.headers.authorization;
  const apiKey = req.headers[API_KEY_HEADER];
  if (auth === undefined && apiKey === undefined) return NONE;
  if (auth !== undefined && apiKey !== undefined) return MALFORMED;
  if (auth !== undefined) {
    if (typeof auth !== 'string' || auth.length > MAX_TOKEN_LENGTH + 16) return MALFORMED;
    const m = BEARER.exec(auth);
    return m === null ? MALFORMED : { kind: 'bearer', token: m[1] as string };
  }
  if (typeof apiKey !== 'string' || apiKey.length > MAX_TOKEN_LENGTH || !TOKEN.test(apiKey)) return MALFORMED;
  return { kind: 'api_key', token: apiKey };
}

/**
 * The Authorization header as sent, when it is the request's only credential
 * field: what a verifier may key a cache of its own successes on. Such a
 * cache holds only `bearerHeader(token)` of tokens readCredential() read from
 * it, so a hit is the same reading; any other spelling is read again.
 */
export function soleAuthorization(req: AuthRequest): string | undefined {
  const auth = req.authorization ?? req.headers.authorization;
  return typeof auth === 'string' && req.headers[API_KEY_HEADER] === undefined ? auth : undefined;
}

/** The one spelling of a bearer token that caches keyed by soleAuthorization() hold: a bounded set per token. */
export function bearerHeader(token: string): string {
  return `Bearer ${token}`;
}

export function hasCredential(req: AuthRequest): boolean {
  return readCredential(req).kind !== 'none';
}

/** Compact JWS shape: three base64url segments. Static keys must not look like this. */
export function isJwtShaped(token: string): boolean {
  return token.length <= MAX_TOKEN_LENGTH && JWT_SHAPE.test(token);
}
