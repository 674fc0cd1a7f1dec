/**
 * Drops whole events from an upstream SSE stream: bytes are held until the
 * event they belong to is complete (a blank line, under any of SSE's line
 * endings), then the event goes on unless `drop` says otherwise, judged on
 * its joined `data:` lines. Nothing is ever split or reordered. Held bytes are
 * bounded by `maxEventBytes`: a larger event is passed on unjudged only when
 * `drop` could not want it, else the stream is failed (see `write`).
 */
export class SseEventFilter {
  readonly #drop: (data: string) => boolean;
  readonly #out: (chunk: Buffer) => boolean;
  readonly #maxEventBytes: number;
  #held: Buffer[] = [];
  #heldBytes = 0;
  #atLineStart = true;
  #lastWasCr = false;

  constructor(drop: (data: string) => boolean, out: (chunk: Buffer) => boolean, maxEventBytes: number) {
    this.#drop = drop;
    this.#out = out;
    this.#maxEventBytes = maxEventBytes;
  }

  /** Takes an upstream chunk; false when the client's socket is full. Throws RangeError on an event over the bound. */
  write(chunk: Buffer): boolean {
    let ok = true;
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      if (!this.#endsEvent(chunk[i] as number)) continue;
      this.#hold(chunk.subarray(start, i + 1));
      start = i + 1;
      ok = this.#flush() && ok;
    }
    if (start < chunk.length) this.#hold(chunk.subarray(start));
    return ok;
  }

  #hold(part: Buffer): void {
    this.#held.push(part);
    this.#heldBytes += part.length;
    if (this.#heldBytes > this.#maxEventBytes) throw new RangeError('an SSE event is larger than toolgate judges');
  }

  #flush(): boolean {
    const event = Buffer.concat(this.#held, this.#heldBytes);
    this.#held = [];
    this.#heldBytes = 0;
    return this.#drop(dataOf(event.toString('utf8'))) ? true : this.#out(event);
  }

  /**
   * Whether this byte ends an event: a line ending right after a line
   * ending. The LF of a CRLF is not a line ending of its own; when the CR
   * before it ended an event, that LF starts the next one, where a client
   * reads it as the rest of the CRLF, or as an empty line that dispatches
   * nothing.
   */
  #endsEvent(c: number): boolean {
    if (c === 0x0a && this.#lastWasCr) {
      this.#lastWasCr = false;
      return false;
    }
    this.#lastWasCr = c === 0x0d;
    if (c !== 0x0a && c !== 0x0d) {
      this.#atLineStart = false;
      return false;
    }
    const blank = this.#atLineStart;
    this.#atLineStart = true;
    return blank;
  }
}

function dataOf(event: string): string {
  const lines = event.split(/\r\n|\n|\r/);
  return lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(l.startsWith('data: ') ? 6 : 5)).join('\n');
}
