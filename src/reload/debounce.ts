/**
 * Trailing debounce with a ceiling: a burst of calls runs `fn` once, after
 * `waitMs` of quiet, but never later than `maxWaitMs` after the burst began,
 * so a file rewritten without pause is still picked up.
 */
export class Debouncer {
  readonly #fn: () => void;
  readonly #waitMs: number;
  readonly #maxWaitMs: number;
  #timer: NodeJS.Timeout | undefined;
  #burstStart: number | undefined;

  constructor(fn: () => void, waitMs: number, maxWaitMs: number) {
    this.#fn = fn;
    this.#waitMs = waitMs;
    this.#maxWaitMs = Math.max(waitMs, maxWaitMs);
  }

  schedule(): void {
    const now = performance.now();
    this.#burstStart ??= now;
    clearTimeout(this.#timer);
    const delay = Math.min(this.#waitMs, Math.max(0, this.#burstStart + this.#maxWaitMs - now));
    this.#timer = setTimeout(() => this.#fire(), delay);
  }

  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#burstStart = undefined;
  }

  #fire(): void {
    this.#timer = undefined;
    this.#burstStart = undefined;
    this.#fn();
  }
}
