/**
 * What a failed JWT verification says to the caller, from jose's error
 * codes: a closed problem for a bad token, or `unavailable` when the keys
 * could not be fetched (so nothing is known about the token yet).
 */
import type { CredentialProblem } from './types.ts';

export type TokenFailure = { kind: 'bad'; problem: CredentialProblem } | { kind: 'unavailable' };

const SIGNER: ReadonlySet<string> = new Set([
  'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
  'ERR_JWKS_NO_MATCHING_KEY',
  'ERR_JWKS_MULTIPLE_MATCHING_KEYS',
  'ERR_JOSE_ALG_NOT_ALLOWED',
]);
/** A JWKS fetch that timed out or did not answer 200 (jose's generic error), or a network error (no code). */
const KEYS_UNREACHABLE: ReadonlySet<string> = new Set(['ERR_JWKS_TIMEOUT', 'ERR_JOSE_GENERIC']);

export function tokenFailure(err: unknown): TokenFailure {
  const code =
    typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string'
      ? (err as { code: string }).code
      : undefined;
  if (code === undefined || !code.startsWith('ERR_J') || KEYS_UNREACHABLE.has(code)) return { kind: 'unavailable' };
  if (code === 'ERR_JWT_EXPIRED') return { kind: 'bad', problem: 'expired' };
  if (SIGNER.has(code)) return { kind: 'bad', problem: 'untrusted_signer' };
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED') {
    const claim = (err as { claim?: unknown }).claim;
    if (claim === 'aud') return { kind: 'bad', problem: 'wrong_audience' };
    if (claim === 'nbf') return { kind: 'bad', problem: 'not_yet_valid' };
    if (claim === 'iss') return { kind: 'bad', problem: 'untrusted_signer' };
  }
  return { kind: 'bad', problem: 'malformed' };
}
