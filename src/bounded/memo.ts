/**
 * A memo that forgets everything once full: the keys are condition and
 * pattern sources from policy and storage, few and repeated, so a rare
 * refill is cheaper than tracking recency on every read.
 */
export class BoundedMemo<V> {
  readonly #max: number;
  readonly #entries = new Map<string, V>();

  constructor(max: number) {
    this.#max = max;
  }

  get(key: string, make: (key: string) => V): V {
    let v = this.#entries.get(key);
    if (v === undefined) {
      v = make(key);
      if (this.#entries.size >= this.#max) this.#entries.clear();
      this.#entries.set(key, v);
    }
    return v;
  }
}
