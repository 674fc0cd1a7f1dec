/**
 * The retry budget of one upstream (Envoy's retry budget, Finagle's
 * RetryBudget): over a sliding window, retries may be at most a percentage
 * of requests, plus a small floor so a quiet replica can still retry. When
 * the upstream is failing for everyone, this is what keeps retries from
 * multiplying its load.
 */
export interface RetryBudgetOptions {
  readonly percent: number;
  readonly min: number;
  readonly windowMs: number;
  readonly now: () => number;
}

/** The window is kept as this many slices, so it slides in steps of a tenth. */
const SLICES = 10;

export class RetryBudget {
  readonly #options: RetryBudgetOptions;
  readonly #sliceMs: number;
  readonly #requests = new Float64Array(SLICES);
  readonly #retries = new Float64Array(SLICES);
  #slice = 0;
  #sliceStart: number;

  constructor(options: RetryBudgetOptions) {
    this.#options = options;
    this.#sliceMs = options.windowMs / SLICES;
    this.#sliceStart = options.now();
  }

  /** One request that may be retried (counted once, however many attempts it takes). */
  request(): void {
    this.#advance();
    this.#requests[this.#slice] = (this.#requests[this.#slice] as number) + 1;
  }

  /** Spends one retry if the budget has one. */
  tryRetry(): boolean {
    this.#advance();
    const requests = sum(this.#requests);
    const retries = sum(this.#retries);
    if (retries + 1 > Math.max(this.#options.min, (requests * this.#options.percent) / 100)) return false;
    this.#retries[this.#slice] = (this.#retries[this.#slice] as number) + 1;
    return true;
  }

  #advance(): void {
    const now = this.#options.now();
    const steps = Math.floor((now - this.#sliceStart) / this.#sliceMs);
    if (steps <= 0) return;
    for (let i = 0; i < Math.min(steps, SLICES); i++) {
      this.#slice = (this.#slice + 1) % SLICES;
      this.#requests[this.#slice] = 0;
      this.#retries[this.#slice] = 0;
    }
    this.#sliceStart += steps * this.#sliceMs;
  }
}

function sum(a: Float64Array): number {
  let s = 0;
  for (const v of a) s += v;
  return s;
}
