import { catalogueDigest, toolDigest } from './digest.ts';
import { isRecord } from '../json/record.ts';

/** One upstream tool: the object exactly as listed, deep-frozen, with its contract digest. */
export interface CatalogueTool {
  readonly name: string;
  readonly tool: Readonly<Record<string, unknown>>;
  readonly digest: string;
}

/** A consistent view of the upstream's tools; never mutated once built. */
export interface Catalogue {
  /** SHA-256 over the sorted tool digests: equal catalogues, equal digests. */
  readonly digest: string;
  /** By name, in the order the upstream listed them. */
  readonly tools: ReadonlyMap<string, CatalogueTool>;
  /** Epoch milliseconds of the sync that produced it. */
  readonly syncedAt: number;
}

/** What building skipped; counts only, so they can be logged and exported. */
export interface BuildStats {
  readonly listed: number;
  readonly kept: number;
  /** Entries that are not objects or have no string name. */
  readonly malformed: number;
  /** Later entries repeating an earlier name; the first one wins. */
  readonly duplicates: number;
  /** Contract fields that canonical JSON refuses (non-finite numbers, nesting too deep). */
  readonly undigestable: number;
}

/**
 * Builds a catalogue from the concatenated `tools` arrays of every page. Never
 * throws: entries it cannot use are skipped and counted. The entries are
 * frozen in place (they are the caller's fresh parse of the wire), not copied.
 */
export function buildCatalogue(
  entries: readonly unknown[],
  syncedAt: number,
): { catalogue: Catalogue; stats: BuildStats } {
  const tools = new Map<string, CatalogueTool>();
  let malformed = 0;
  let duplicates = 0;
  let undigestable = 0;
  for (const entry of entries) {
    if (!isRecord(entry) || typeof entry.name !== 'string') {
      malformed++;
      continue;
    }
    if (tools.has(entry.name)) {
      duplicates++;
      continue;
    }
    const d = toolDigest(entry);
    if (!d.ok) {
      undigestable++;
      continue;
    }
    tools.set(entry.name, Object.freeze({ name: entry.name, tool: deepFreeze(entry), digest: d.digest }));
  }
  const catalogue: Catalogue = Object.freeze({
    digest: catalogueDigest([...tools.values()].map((t) => t.digest)),
    tools: new FrozenMap(tools),
    syncedAt,
  });
  const stats: BuildStats = Object.freeze({
    listed: entries.length,
    kept: tools.size,
    malformed,
    duplicates,
    undigestable,
  });
  return { catalogue, stats };
}

/**
 * The catalogue without the tools `hide` names (quarantined ones), with the
 * digest of what remains, so caches keyed by catalogue digest (the discovery
 * index, cursors) never serve a hidden tool.
 */
export function withoutTools(catalogue: Catalogue, hide: ReadonlyMap<string, unknown>): Catalogue {
  if (hide.size === 0) return catalogue;
  const tools = new Map([...catalogue.tools].filter(([name]) => !hide.has(name)));
  return Object.freeze({
    digest: catalogueDigest([...tools.values()].map((t) => t.digest)),
    tools: new FrozenMap(tools),
    syncedAt: catalogue.syncedAt,
  });
}

/** Iterative, so a deeply nested upstream value cannot exhaust the stack. */
function deepFreeze<T extends object>(root: T): Readonly<T> {
  const stack: object[] = [root];
  while (stack.length > 0) {
    const o = stack.pop() as object;
    if (Object.isFrozen(o)) continue;
    Object.freeze(o);
    for (const v of Object.values(o)) {
      if (typeof v === 'object' && v !== null) stack.push(v);
    }
  }
  return root;
}

/**
 * A ReadonlyMap that really is read-only: Object.freeze does not stop
 * Map.prototype.set, so the backing map stays private.
 */
class FrozenMap<K, V> implements ReadonlyMap<K, V> {
  readonly #map: Map<K, V>;

  constructor(map: Map<K, V>) {
    this.#map = map;
    Object.freeze(this);
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    return this.#map.get(key);
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  forEach(fn: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [k, v] of this.#map) fn.call(thisArg, v, k, this);
  }

  keys(): MapIterator<K> {
    return this.#map.keys();
  }

  values(): MapIterator<V> {
    return this.#map.values();
  }

  entries(): MapIterator<[K, V]> {
    return this.#map.entries();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.#map.entries();
  }
}
