import { Lru } from '../../bounded/lru.ts';

/** One limit as the policy states it, resolved: `burst` calls at once, one more every `msPerCall`. */
export interface BucketLimit {
  /** Identifies the limit across policy reloads: an unchanged rule keeps its buckets. */
  readonly key: string;
  readonly burst: number;
  /** Milliseconds to earn one call back. */
  readonly msPerCall: number;
}

export type Admission = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number };

interface Bucket {
  tokens: number;
  atMs: number;
}

const MAX_BUCKETS = 100_000;

/**
 * Token buckets for the rate limits, kept in process per replica. A call
 * needs one token from every bucket that applies, and takes them only when
 * all can give one, so a refusal by one limit never uses up another. The
 * store is bounded: the least recently used bucket is forgotten first, and
 * a forgotten bucket is a full one, which is what an idle bucket becomes.
 */
export class TokenBuckets {
  readonly #buckets: Lru<string, Bucket>;
  readonly #now: () => number;

  constructor(now: () => number, maxBuckets = MAX_BUCKETS) {
    this.#now = now;
    this.#buckets = new Lru(maxBuckets);
  }

  /** One call by `subject` under every limit of `limits`; with `consume` false, only whether it would pass. */
  take(limits: readonly BucketLimit[], subject: string, consume: boolean): Admission {
    const now = this.#now();
    const found: Bucket[] = [];
    let waitMs = 0;
    for (const limit of limits) {
      const key = `${limit.key}\u0000${subject}`;
      const bucket = this.#buckets.get(key) ?? { tokens: limit.burst, atMs: now };
      bucket.tokens = Math.min(limit.burst, bucket.tokens + Math.max(0, now - bucket.atMs) / limit.msPerCall);
      bucket.atMs = now;
      if (bucket.tokens < 1) waitMs = Math.max(waitMs, Math.ceil((1 - bucket.tokens) * limit.msPerCall));
      if (consume) this.#buckets.set(key, bucket);
      found.push(bucket);
    }
    if (waitMs > 0) return { ok: false, retryAfterMs: waitMs };
    if (consume) for (const bucket of found) bucket.tokens -= 1;
    return { ok: true };
  }

  get size(): number {
    return this.#buckets.size;
  }
}
