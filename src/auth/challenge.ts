/**
 * `WWW-Authenticate` values for 401 and for the 403 step-up. Every parameter
 * is emitted as a quoted-string built here: the URL is re-serialised by the
 * WHATWG parser (which percent-encodes quotes and drops CR/LF/tab), scopes are
 * limited to the RFC 6749 scope-token grammar, and anything outside visible
 * ASCII is dropped, so configuration or token content cannot inject a header.
 */
import { isScope } from '../config/policy/grant-row.ts';
import type { CredentialProblem, VerifyFailure } from './types.ts';

/** RFC 6750 `error_description` per problem: fixed text, so nothing of the token is ever in the header. */
const DESCRIPTIONS: Readonly<Record<CredentialProblem, string>> = {
  expired: 'The token has expired',
  not_yet_valid: 'The token is not valid yet',
  wrong_audience: 'The token is not for this audience',
  untrusted_signer: 'The token is not signed by a trusted issuer',
  revoked: 'The token is no longer valid: the object it is bound to is gone',
  malformed: 'The token lacks required claims',
};

/**
 * The 401 challenge: `Bearer resource_metadata="<url>"`, plus
 * `error="invalid_token"` when a credential was presented and refused
 * (RFC 6750 §3.1 says to omit the error when none was presented), with an
 * `error_description` when the verifier said why.
 */
export function unauthorizedChallenge(
  code: VerifyFailure,
  resourceMetadataUrl?: string,
  problem?: CredentialProblem,
): string {
  const params: string[] = [];
  if (code === 'bad_credential') params.push('error="invalid_token"');
  if (code === 'bad_credential' && problem !== undefined)
    params.push(`error_description=${quote(DESCRIPTIONS[problem])}`);
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
  const params = [
    'error="insufficient_user_authentication"',
    `error_description=${quote('A stronger authentication is required for this tool')}`,
  ];
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
