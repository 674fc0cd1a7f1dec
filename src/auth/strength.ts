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

/**
 * Whether this credential could ever meet the level: it does now, or it is
 * an OAuth/JWT bearer token whose holder can step up by re-authenticating
 * (to a one-time token only where the policy accepts them). A static key or
 * an anonymous caller stays what it is.
 */
export function strengthCanReach(level: SecurityLevel, strength: CredentialStrength, oneTimeTokens: boolean): boolean {
  if (strengthSatisfies(level, strength)) return true;
  if (!canStepUp(strength)) return false;
  return level !== 'strict' || oneTimeTokens;
}

/** Bearer tokens from an authorization server can be replaced by stronger ones; static keys and anonymity cannot. */
export function canStepUp(strength: CredentialStrength): boolean {
  return strength === 'short_lived' || strength === 'one_time';
}
