import type { CredentialStrength, Principal } from './types.ts';

export function makePrincipal(
  id: string,
  scopes: Iterable<string>,
  credentialStrength: CredentialStrength,
  claims?: Readonly<Record<string, unknown>>,
): Principal {
  return Object.freeze({
    id,
    scopes: new Set(scopes),
    credentialStrength,
    ...(claims !== undefined && { claims: Object.freeze(claims) }),
  });
}
