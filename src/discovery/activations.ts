import { Lru } from '../bounded/lru.ts';

/**
 * Which onDemand tools discovery has shown to which principal: those appear
 * in that principal's deferred tools/list until the TTL passes. Keyed by the
 * grant revision too, so any grant change forgets every activation at once.
 * In process for one replica; in Redis (activations-redis.ts) when replicas
 * share grants, so a caller's list does not depend on which replica answers.
 */
export interface Activations {
  /** Records `names` as shown; answers what was active just before, in the same step (one round trip in Redis). */
  activate(
    revision: number,
    principal: string,
    names: readonly string[],
  ): ReadonlySet<string> | Promise<ReadonlySet<string>>;
  active(revision: number, principal: string): ReadonlySet<string> | Promise<ReadonlySet<string>>;
}

/** The in-process store. Bounded: the least recently active principal is dropped first. */
export class ActivationStore implements Activations {
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #byKey: Lru<string, Map<string, number>>;

  constructor(opts: { ttlMs: number; maxPrincipals: number; now?: () => number }) {
    this.#ttlMs = opts.ttlMs;
    this.#byKey = new Lru(opts.maxPrincipals);
    this.#now = opts.now ?? Date.now;
  }

  activate(revision: number, principal: string, names: readonly string[]): ReadonlySet<string> {
    const before = this.active(revision, principal);
    const key = `${revision}\u0000${principal}`;
    const tools = this.#byKey.peek(key) ?? new Map<string, number>();
    const until = this.#now() + this.#ttlMs;
    for (const name of names) tools.set(name, until);
    this.#byKey.set(key, tools);
    return before;
  }

  /** The live activations of a principal at a revision (expired ones are pruned). */
  active(revision: number, principal: string): ReadonlySet<string> {
    // Reading is not activity: only activate() keeps a principal from being dropped.
    const tools = this.#byKey.peek(`${revision}\u0000${principal}`);
    if (tools === undefined) return EMPTY;
    const now = this.#now();
    const live = new Set<string>();
    for (const [name, until] of tools) {
      if (until > now) live.add(name);
      else tools.delete(name);
    }
    return live;
  }
}

const EMPTY: ReadonlySet<string> = new Set();
