import { parseRecord } from '../json/record.ts';
import type { JsonRpcId } from '../mcp/jsonrpc.ts';

/** A final JSON-RPC response as stored for replay: the HTTP status it came with and the message. */
export interface StoredResponse {
  readonly status: number;
  readonly message: Readonly<Record<string, unknown>>;
}

/**
 * Picks the final JSON-RPC response for one request out of the upstream's
 * answer as it streams past: the whole body of a JSON response, or, on an
 * event stream, the event whose message answers the request id (progress
 * notifications pass through and are not kept). At most `maxBytes` are held;
 * a larger response is marked too large, never truncated.
 */
export class ResponseCapture {
  readonly #id: JsonRpcId;
  readonly #maxBytes: number;
  #status = 0;
  #eventStream = false;
  #parts: Buffer[] = [];
  #held = 0;
  #tooLarge = false;
  #final: Readonly<Record<string, unknown>> | undefined;

  constructor(id: JsonRpcId, maxBytes: number) {
    this.#id = id;
    this.#maxBytes = maxBytes;
  }

  head(status: number, headers: Record<string, string | string[] | undefined>): void {
    this.#status = status;
    const type = headers['content-type'];
    this.#eventStream = typeof type === 'string' && type.toLowerCase().startsWith('text/event-stream');
  }

  chunk(chunk: Buffer): void {
    if (this.#final !== undefined) return;
    this.#parts.push(chunk);
    this.#held += chunk.length;
    if (this.#eventStream) this.#events();
    if (this.#held > this.#maxBytes) {
      // Only the event being read is held on a stream, so this is one message too large to keep.
      this.#tooLarge = this.#final === undefined;
      this.#parts = [];
      this.#held = 0;
    }
  }

  /** The final response once the exchange ended, if one was seen and fits. */
  result():
    | { readonly kind: 'response'; readonly response: StoredResponse }
    | { readonly kind: 'too_large' }
    | { readonly kind: 'none' } {
    if (this.#final === undefined && !this.#eventStream && !this.#tooLarge && this.#held > 0)
      this.#final = this.#answer(Buffer.concat(this.#parts).toString('utf8'));
    if (this.#final !== undefined)
      return { kind: 'response', response: { status: this.#status, message: this.#final } };
    return this.#tooLarge ? { kind: 'too_large' } : { kind: 'none' };
  }

  /** Splits held bytes into complete events and keeps only the unfinished one. */
  #events(): void {
    const text = Buffer.concat(this.#parts).toString('utf8');
    const events = text.split(/\r?\n\r?\n/);
    const rest = events.pop() ?? '';
    for (const event of events) {
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5))
        .join('\n');
      const answer = data === '' ? undefined : this.#answer(data);
      if (answer !== undefined) {
        this.#final = answer;
        break;
      }
    }
    this.#parts = rest === '' ? [] : [Buffer.from(rest)];
    this.#held = this.#parts[0]?.length ?? 0;
  }

  #answer(text: string): Readonly<Record<string, unknown>> | undefined {
    const message = parseRecord(text);
    if (
      message === undefined ||
      message.id !== this.#id ||
      !(Object.hasOwn(message, 'result') || Object.hasOwn(message, 'error'))
    )
      return undefined;
    return message;
  }
}
