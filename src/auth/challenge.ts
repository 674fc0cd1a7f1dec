/**
 * `WWW-Authenticate` values for 401 and for the 403 step-up. Every parameter
 * is emitted as a quoted-string built here: the URL is re-serialised by the
 * WHATWG parser (which percent-encodes quotes and drops CR/LF/tab), scopes are
 * limited to the RFC 6749 scope-token grammar, and anything outside visible
 * ASCII is dropped, so configuration or token content cannot inject a header.
 */
import { isScope } from '../config/policy/grant-row.ts';
import type { VerifyFailure } from './types.ts';

/**
 * The 401 challenge: `Bearer resource_metadata="<url>"`, plus
 * `error="invalid_token"` when a credential was presented and refused
 * (RFC 6750 §3.1 says to omit the error when none was presented).
 */
export function unauthorizedChallenge(code: VerifyFailure, resourceMetadataUrl?: string): string {
  const params: string[] = [];
  if (code === 'bad_credential') params.push('error="invalid_token"');
  pushResourceMetadata(params, resourceMetadataUrl);
  return params.length === 0 ? 'Bearer' : `Bearer ${params.join(', ')}`;
}

/** The 403 step-up: `Bearer error="insufficient_scope", scope="a b", resource_metadata="…"`. */
export function insufficientScopeChallenge(scopes: readonly string[], resourceMetadataUrl?: string): string {
  const params = ['error="insufficient_scope"'];
  const clean = [...new Set(scopes.filter(isScope))];
  if (clean.length > 0) params.push(`scope=${quote(clean.join(' '))}`);
  pushResourceMetadata(params, resourceMetadataUrl);
  return `Bearer ${params.join(', ')}`;
}

/**
 * The RFC 9470 step-up: `Bearer error="insufficient_user_authentication"`.
 * The policy defines no `acr_values` or `max_age` for security levels, so
 * none are sent; the client re-authenticates for a stronger token.
 */
export function insufficientUserAuthenticationChallenge(resourceMetadataUrl?: string): string {
  const params = ['error="insufficient_user_authentication"', `error_description=${quote('A stronger authentication is required for this tool')}`];
  pushResourceMetadata(params, resourceMetadataUrl);
  return `Bearer ${params.join(', ')}`;
}

function pushResourceMetadata(params: string[], raw: string | undefined): void {
  if (raw === undefined || !URL.canParse(raw)) return;
  const url = new URL(raw);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return;
  params.push(`resource_metadata=${quote(url.href)}`);
}

/** RFC 9110 quoted-string over visible ASCII and space only. */
export function quote(value: string): string {
  return `"${value.replace(/[^\x20-\x7e]/g, '').replace(/["\\]/g, '\\$&')}"`;
}
