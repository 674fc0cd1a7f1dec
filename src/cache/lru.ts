/**
 * A bounded least-recently-used map. Map iteration order is insertion order,
 * so re-inserting on a hit keeps the oldest entry first for eviction.
 */
export const DEFAULT_L1_MAX_ENTRIES = 10_000;

export class Lru<K, V> {
  readonly #max: number;
  readonly #map = new Map<K, V>();

  constructor(maxEntries: number) {
    this.#max = Math.max(1, Math.floor(maxEntries));
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    const v = this.#map.get(key);
    if (v === undefined) return undefined;
    this.#map.delete(key);
    this.#map.set(key, v);
    return v;
  }

  /** The value without counting it as a use. */
  peek(key: K): V | undefined {
    return this.#map.get(key);
  }

  delete(key: K): void {
    this.#map.delete(key);
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    if (this.#map.size >= this.#max) this.#map.delete(this.#map.keys().next().value as K);
    this.#map.set(key, value);
  }

  clear(): void {
    this.#map.clear();
  }
}
