/**
 * Per-tool limits on calls in flight at once (the policy's `maxConcurrent`),
 * counted on this replica. A slot is taken before the call goes upstream and
 * given back when its exchange ends, however it ends.
 */
export class ConcurrencyLimits {
  readonly #inFlight = new Map<string, number>();

  /** Takes a slot for `tool`; false when `max` are already in flight. */
  tryAcquire(tool: string, max: number): boolean {
    const n = this.#inFlight.get(tool) ?? 0;
    if (n >= max) return false;
    this.#inFlight.set(tool, n + 1);
    return true;
  }

  release(tool: string): void {
    const n = (this.#inFlight.get(tool) ?? 1) - 1;
    if (n <= 0) this.#inFlight.delete(tool);
    else this.#inFlight.set(tool, n);
  }
}
