import type { ServerResponse } from 'node:http';

const LF = 0x0a;
const CR = 0x0d;

/**
 * Passes an upstream SSE stream to the client and lets toolgate add events
 * of its own without ever splitting one of the upstream's: an added event is
 * written only where the stream so far ends with a blank line (an event
 * boundary under any of SSE's line endings), else held until the upstream's
 * current event is complete. Added events carry no `id:`, so the client's
 * last event id, and with it resumption, stays the upstream's.
 */
export class SseInjector {
  readonly #res: ServerResponse;
  /** The last byte written ended a line. */
  #atLineStart = true;
  /** The stream so far ends with a blank line. */
  #atBoundary = true;
  #lastWasCr = false;
  #held: Buffer[] = [];
  /** Nothing of the upstream's has been written yet. */
  #upstreamFirst = true;
  /** An added event went out before the upstream's first byte. */
  #addedFirst = false;

  constructor(res: ServerResponse) {
    this.#res = res;
  }

  /** Writes an upstream chunk; false when the client's socket is full (as `res.write`). */
  write(chunk: Buffer): boolean {
    if (this.#upstreamFirst && chunk.length > 0) {
      this.#upstreamFirst = false;
      // A byte order mark is skipped only at the very start of a stream; after an added event it would spoil the upstream's first line.
      if (this.#addedFirst && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3);
    }
    for (let i = 0; i < chunk.length; i++) {
      this.#step(chunk[i] as number);
      if (this.#held.length === 0 || !this.#atBoundary) continue;
      // The event in progress just ended: what waited goes out before the rest of the chunk.
      this.#res.write(chunk.subarray(0, i + 1));
      for (const event of this.#held) this.#res.write(event);
      this.#held = [];
      return this.write(chunk.subarray(i + 1));
    }
    return this.#res.write(chunk);
  }

  /** Adds a complete event (ending with a blank line); an identical one already waiting is not queued twice. */
  send(event: Buffer): void {
    if (this.#res.writableEnded || this.#res.destroyed) return;
    if (this.#atBoundary) {
      if (this.#upstreamFirst) this.#addedFirst = true;
      this.#res.write(event);
      return;
    }
    if (!this.#held.some((e) => e.equals(event))) this.#held.push(event);
  }

  #step(c: number): void {
    if (c === LF && this.#lastWasCr) {
      // The second half of CRLF: the line already ended at the CR.
      this.#lastWasCr = false;
      return;
    }
    if (c === LF || c === CR) {
      this.#atBoundary = this.#atLineStart;
      this.#atLineStart = true;
      this.#lastWasCr = c === CR;
      return;
    }
    this.#atLineStart = false;
    this.#atBoundary = false;
    this.#lastWasCr = false;
  }
}
