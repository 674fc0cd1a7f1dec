/**
 * Remembers which one-time tokens were used. `claim` succeeds once per id
 * while the token can still verify; afterwards the id may be forgotten,
 * because an expired token fails verification anyway.
 */

export interface ReplayStore {
  /**
   * Records `jti` as used until `expiresAtMs`. True the first time; false for
   * a replay, and false when the id cannot be recorded (fail closed).
   */
  claim(jti: string, expiresAtMs: number): Promise<boolean>;
}

export interface MemoryReplayStoreOptions {
  /** Most live ids held; when full of unexpired ids, new claims are refused. */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

/** How many of the oldest entries each claim looks at for expiry. */
const SWEEP_STEP = 8;

/**
 * In-process store for one replica. Bounded: expired ids are dropped as new
 * ones arrive, and when the bound is reached by live ids the store refuses
 * new claims rather than forget a live id (which would allow a replay).
 */
export class MemoryReplayStore implements ReplayStore {
  readonly #entries = new Map<string, number>();
  readonly #max: number;
  readonly #now: () => number;

  constructor(options: MemoryReplayStoreOptions = {}) {
    this.#max = options.maxEntries ?? 100_000;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  claim(jti: string, expiresAtMs: number): Promise<boolean> {
    const now = this.#now();
    this.#sweepOldest(now);
    const seen = this.#entries.get(jti);
    if (seen !== undefined && seen > now) return Promise.resolve(false);
    if (seen !== undefined) this.#entries.delete(jti);
    if (!(expiresAtMs > now)) return Promise.resolve(false);
    if (this.#entries.size >= this.#max) {
      this.#sweepAll(now);
      if (this.#entries.size >= this.#max) return Promise.resolve(false);
    }
    this.#entries.set(jti, expiresAtMs);
    return Promise.resolve(true);
  }

  #sweepOldest(now: number): void {
    let n = 0;
    for (const [jti, exp] of this.#entries) {
      if (n++ >= SWEEP_STEP) break;
      if (exp <= now) this.#entries.delete(jti);
    }
  }

  #sweepAll(now: number): void {
    for (const [jti, exp] of this.#entries) if (exp <= now) this.#entries.delete(jti);
  }
}
