/**
 * Remembers which one-time tokens were used. `claim` succeeds once per id
 * while the token can still verify; afterwards the id may be forgotten,
 * because an expired token fails verification anyway.
 */

/**
 * `claimed`: first use, recorded. `refused`: a replay, or an id or expiry that
 * cannot be valid. `unavailable`: the store cannot say (unreachable, full, or
 * not trustworthy for this token): the caller may retry later.
 */
export type ClaimResult = 'claimed' | 'refused' | 'unavailable';

export interface ReplayStore {
  /**
   * Records `jti` as used until `expiresAtMs`. `issuedAtMs` is the earliest
   * the token can have been issued: a store that lost its records refuses to
   * vouch for tokens that may have been used before the loss.
   */
  claim(jti: string, expiresAtMs: number, issuedAtMs: number): Promise<ClaimResult>;
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

  claim(jti: string, expiresAtMs: number): Promise<ClaimResult> {
    const now = this.#now();
    this.#sweepOldest(now);
    const seen = this.#entries.get(jti);
    if (seen !== undefined && seen > now) return Promise.resolve('refused');
    if (seen !== undefined) this.#entries.delete(jti);
    if (!(expiresAtMs > now)) return Promise.resolve('refused');
    if (this.#entries.size >= this.#max) {
      this.#sweepAll(now);
      if (this.#entries.size >= this.#max) return Promise.resolve('unavailable');
    }
    this.#entries.set(jti, expiresAtMs);
    return Promise.resolve('claimed');
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
