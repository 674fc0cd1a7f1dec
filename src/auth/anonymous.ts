/**
 * Anonymous access, off unless configured: a request carrying no credential
 * at all becomes the principal `anonymous`. Any credential, even a malformed
 * one, is left to the other verifiers (and refused if none recognises it).
 */
import { hasCredential } from './credentials.ts';
import { makePrincipal } from './principal.ts';
import type { Verifier, VerifyResult } from './types.ts';

const ANONYMOUS_ID = 'anonymous';

export function createAnonymousVerifier(scopes: readonly string[]): Verifier {
  const scopeList = [...scopes];
  return {
    name: 'anonymous',
    verify(req): VerifyResult {
      if (hasCredential(req)) return { ok: false, code: 'no_credential' };
      return { ok: true, principal: makePrincipal(ANONYMOUS_ID, scopeList, 'anonymous') };
    },
  };
}
