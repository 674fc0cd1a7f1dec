/**
 * A bounded least-recently-used map. Map iteration order is insertion order,
 * so re-inserting on a hit keeps the oldest entry first for eviction.
 */
export const DEFAULT_L1_MAX_ENTRIES = 10_000;

/** No key: a symbol no caller can hold, so "no newest entry" needs no flag beside the key. */
const NONE: unique symbol = Symbol('none');

export class Lru<K, V> {
  readonly #max: number;
  readonly #map = new Map<K, V>();
  /** The most recently used key, which a hit need not move: the common case of one caller or one tool in a row. */
  #newest: K | typeof NONE = NONE;

  constructor(maxEntries: number) {
    this.#max = Math.max(1, Math.floor(maxEntries));
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    const v = this.#map.get(key);
    if (v === undefined) return undefined;
    if (this.#newest === key) return v;
    this.#map.delete(key);
    this.#map.set(key, v);
    this.#newest = key;
    return v;
  }

  /** The value without counting it as a use. */
  peek(key: K): V | undefined {
    return this.#map.get(key);
  }

  delete(key: K): void {
    this.#map.delete(key);
    if (this.#newest === key) this.#newest = NONE;
  }

  /** Returns the value evicted to make room, if any, so a caller's own indexes can forget it. */
  set(key: K, value: V): V | undefined {
    this.#map.delete(key);
    let evicted: V | undefined;
    if (this.#map.size >= this.#max) {
      const [oldest, old] = this.#map.entries().next().value as [K, V];
      this.#map.delete(oldest);
      evicted = old;
    }
    this.#map.set(key, value);
    this.#newest = key;
    return evicted;
  }

  /** Every entry, least recently used first, without counting any as a use. */
  entries(): IterableIterator<[K, V]> {
    return this.#map.entries();
  }

  clear(): void {
    this.#map.clear();
    this.#newest = NONE;
  }
}
