/**
 * What a tool's security level demands of the credential: `standard` takes
 * any principal, `elevated` a short-lived or one-time token, `strict` a
 * one-time token. Grants are checked separately; this only ranks strength.
 */
import type { SecurityLevel } from '../config/policy/raw.ts';
import type { CredentialStrength } from './types.ts';

const RANK: Readonly<Record<CredentialStrength, number>> = { anonymous: 0, static: 1, short_lived: 2, one_time: 3 };
const NEEDS: Readonly<Record<SecurityLevel, number>> = { standard: 0, elevated: 2, strict: 3 };

export function strengthSatisfies(level: SecurityLevel, strength: CredentialStrength): boolean {
  return RANK[strength] >= NEEDS[level];
}
