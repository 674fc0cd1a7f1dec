import type { Principal } from '../auth/types.ts';

const subjectKeys = new WeakMap<Principal, string>();

/**
 * The in-process (L1) key of a principal with its scope set, remembered per
 * principal object so a repeat caller costs one WeakMap lookup.
 */
export function l1Key(principal: Principal): string {
  let key = subjectKeys.get(principal);
  if (key === undefined) {
    key = principal.scopes.size === 0 ? principal.id : `${principal.id}\u0000${[...principal.scopes].sort().join(' ')}`;
    subjectKeys.set(principal, key);
  }
  return key;
}
