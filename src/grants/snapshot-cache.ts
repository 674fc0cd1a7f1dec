import type { Principal } from '../auth/types.ts';
import type { Policy } from '../config/policy.ts';
import { snapshotFor } from './snapshot.ts';
import type { SnapshotResult } from './types.ts';

/**
 * Snapshots derived from one policy, per principal and scope set. A snapshot
 * is a pure function of (policy, revision, principal, scopes), so caching it
 * per policy object keeps "grants are re-read at every call": a new policy
 * is a new object and starts with an empty cache.
 */
export class SnapshotCache {
  readonly #max: number;
  readonly #byPolicy = new WeakMap<Policy, Map<string, SnapshotResult>>();

  constructor(maxPerPolicy = 10_000) {
    this.#max = maxPerPolicy;
  }

  get(policy: Policy, revision: number, principal: Principal): SnapshotResult {
    let cache = this.#byPolicy.get(policy);
    if (cache === undefined) {
      cache = new Map();
      this.#byPolicy.set(policy, cache);
    }
    const key = principal.scopes.size === 0 ? `${revision}\u0000${principal.id}` : `${revision}\u0000${principal.id}\u0000${[...principal.scopes].sort().join(' ')}`;
    let hit = cache.get(key);
    if (hit === undefined) {
      hit = snapshotFor(policy.grants, principal, revision);
      if (cache.size >= this.#max) cache.delete(cache.keys().next().value as string);
      cache.set(key, hit);
    }
    return hit;
  }
}
