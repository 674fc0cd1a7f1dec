import type { CredentialStrength, Principal } from './types.ts';

export function makePrincipal(id: string, scopes: Iterable<string>, credentialStrength: CredentialStrength): Principal {
  return Object.freeze({ id, scopes: new Set(scopes), credentialStrength });
}
