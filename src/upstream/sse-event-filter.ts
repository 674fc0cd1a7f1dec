/**
 * What becomes of one event, judged on its joined `data:` lines: undefined
 * keeps it as it came, null drops it, a string replaces its data (its other
 * fields, `id:` and `event:` among them, stay).
 */
export type EventJudge = (data: string) => string | null | undefined;

/** An event over the bound: the stream cannot go on, since the event can be neither judged nor split. */
export class EventTooLarge extends RangeError {}

/**
 * Drops or rewrites whole events of an upstream SSE stream: bytes are held
 * until the event they belong to is complete (a blank line, under any of
 * SSE's line endings), then the event goes on as `judge` says. Nothing is
 * ever split or reordered. Held bytes are bounded by `maxEventBytes`: a
 * larger event fails the stream (see `write`).
 */
export class SseEventFilter {
  readonly #judge: EventJudge;
  readonly #out: (chunk: Buffer) => boolean;
  readonly #maxEventBytes: number;
  #held: Buffer[] = [];
  #heldBytes = 0;
  #atLineStart = true;
  #lastWasCr = false;

  constructor(judge: EventJudge, out: (chunk: Buffer) => boolean, maxEventBytes: number) {
    this.#judge = judge;
    this.#out = out;
    this.#maxEventBytes = maxEventBytes;
  }

  /** Takes an upstream chunk; false when the client's socket is full. Throws EventTooLarge on an event over the bound. */
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
    if (this.#heldBytes > this.#maxEventBytes) throw new EventTooLarge('an SSE event is larger than toolgate judges');
  }

  #flush(): boolean {
    const event = Buffer.concat(this.#held, this.#heldBytes);
    this.#held = [];
    this.#heldBytes = 0;
    const text = event.toString('utf8');
    const verdict = this.#judge(dataOf(text));
    if (verdict === undefined) return this.#out(event);
    if (verdict === null) return true;
    return this.#out(Buffer.from(withData(text, verdict)));
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

/** The event with its `data:` lines replaced by one line of `data`, its other lines and its ending kept. */
function withData(event: string, data: string): string {
  const body = event.replace(/(\r\n|\n|\r)+$/, '');
  const ending = event.slice(body.length);
  const kept = body.split(/\r\n|\n|\r/).filter((l) => !l.startsWith('data:'));
  return [...kept, ...data.split('\n').map((l) => `data: ${l}`)].join('\n') + (ending.length > 0 ? ending : '\n\n');
}

function dataOf(event: string): string {
  const lines = event.split(/\r\n|\n|\r/);
  return lines
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5))
    .join('\n');
}
