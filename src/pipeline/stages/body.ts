import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';

export type BodyResult =
  | { readonly ok: true; readonly body: Buffer }
  | { readonly ok: false; readonly code: 'payload_too_large' | 'aborted' };

/** A declared Content-Length over the limit is refused before any byte is read. */
export function declaredTooLarge(req: IncomingMessage, limit: number): boolean {
  const declared = req.headers['content-length'];
  return declared !== undefined && Number(declared) > limit;
}

/**
 * toolgate handles `checkContinue` itself (main.ts), so Node does not answer
 * `Expect: 100-continue` on arrival: the client is told to send its body only
 * once toolgate is about to read it, after authentication and the size check.
 * A refusal before that is answered without the body ever being sent.
 */
export function continueIfExpected(req: IncomingMessage, res: ServerResponse): void {
  const expect = req.headers.expect;
  if (typeof expect === 'string' && expect.trim().toLowerCase() === '100-continue' && !res.headersSent)
    res.writeContinue();
}

/**
 * Reads a request body: at once when it has all arrived, else counting while
 * it streams, so an oversized body is refused as soon as it crosses the limit,
 * not after it has been held in memory whole.
 */
export function readBody(req: IncomingMessage, res: ServerResponse, limit: number): Promise<BodyResult> {
  if (declaredTooLarge(req, limit)) return Promise.resolve({ ok: false, code: 'payload_too_large' });
  // A small body comes in the packets that brought its headers: by the time the parser is done with them
  // (one turn later), all of it waits in the request's buffer and is taken whole, without the four
  // listeners and the stream's own ticks of a body that is still on its way.
  return Promise.resolve().then(() => {
    const buffered = wholeBody(req);
    return buffered === undefined ? streamedBody(req, res, limit) : { ok: true, body: buffered };
  });
}

const EMPTY = Buffer.alloc(0);

/** The whole body when it has arrived: as many bytes buffered as Content-Length declares (the limit was checked on it). */
function wholeBody(req: IncomingMessage): Buffer | undefined {
  const declared = req.headers['content-length'];
  if (declared === undefined || req.destroyed || req.readableLength !== Number(declared)) return undefined;
  return (req.read() as Buffer | null) ?? EMPTY;
}

function streamedBody(req: IncomingMessage, res: ServerResponse, limit: number): BodyResult | Promise<BodyResult> {
  // Gone while authentication was awaited (a JWKS fetch): 'close' has fired
  // and 'end' never will, so waiting for either would never finish.
  if (req.destroyed) return { ok: false, code: 'aborted' };
  continueIfExpected(req, res);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    // The listeners stay, and go with the request: taking four off per
    // request cost more than this check.
    const finish = (result: BodyResult) => {
      if (done) return;
      done = true;
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        req.pause();
        finish({ ok: false, code: 'payload_too_large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () =>
      finish({ ok: true, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size) });
    const onAbort = () => finish({ ok: false, code: 'aborted' });
    const onClose = () => {
      if (!req.complete) onAbort();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onClose);
  });
}

/**
 * Passes a streamed body through unchanged, failing the stream once it
 * crosses the limit; the error carries `code` so the forwarder can answer 413.
 */
export class BodyLimit extends Transform {
  #remaining: number;
  constructor(limit: number) {
    super();
    this.#remaining = limit;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.#remaining -= chunk.length;
    if (this.#remaining < 0) {
      done(Object.assign(new Error('request body over limit'), { code: 'TOOLGATE_BODY_LIMIT' }));
      return;
    }
    done(null, chunk);
  }
}
