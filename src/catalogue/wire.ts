import type { IncomingHttpHeaders } from 'node:http';
import { createParser } from 'eventsource-parser';
import type { Dispatcher } from 'undici';
import { isRecord } from '../json/record.ts';
import { LinkError } from './link-error.ts';

/**
 * Streamable HTTP as the catalogue link speaks it: one JSON-RPC message per
 * POST, answered with `application/json` or an SSE stream (the client must
 * take both), and long-lived SSE streams for change notifications.
 */

/** Largest reply read, and largest SSE event: a page of thousands of tools fits many times over. */
const MAX_REPLY_BYTES = 64 * 1024 * 1024;
/** Of a refusal's body, only enough to find a JSON-RPC error in. */
const MAX_REFUSAL_BYTES = 64 * 1024;

export interface RpcError {
  readonly code: number;
  readonly data?: unknown;
}

export type PostOutcome =
  /** The JSON-RPC response to the message sent. */
  | {
      readonly kind: 'reply';
      readonly result?: unknown;
      readonly error?: RpcError;
      readonly headers: IncomingHttpHeaders;
    }
  /** 2xx without a response: what a notification gets (202). */
  | { readonly kind: 'accepted'; readonly headers: IncomingHttpHeaders }
  /** A non-2xx status, with the JSON-RPC error its body carried, if it was one. */
  | { readonly kind: 'refused'; readonly status: number; readonly error?: RpcError };

export interface Exchange {
  /** Where requests go: toolgate's upstream pool in the sidecar. */
  readonly dispatcher: Dispatcher;
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
  /** Every other message the server sends on the reply's stream (notifications, its own requests). */
  readonly onMessage?: (message: Record<string, unknown>) => void;
}

/** POSTs one JSON-RPC message and reads its outcome. Throws on network failure, abort, or a reply it cannot read. */
export async function post(
  x: Exchange,
  message: { readonly id?: number; readonly method: string; readonly params?: unknown },
): Promise<PostOutcome> {
  const res = await x.dispatcher.request({
    ...target(x.url),
    method: 'POST',
    headers: { ...x.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
    signal: x.signal,
  });
  const { statusCode: status, headers } = res;
  if (status < 200 || status > 299) {
    const text = await readText(res.body, MAX_REFUSAL_BYTES).catch(() => undefined);
    const error = text === undefined ? undefined : rpcErrorOf(parseJson(text));
    return error === undefined ? { kind: 'refused', status } : { kind: 'refused', status, error };
  }
  if (message.id === undefined || status === 202) {
    res.body.resume();
    return { kind: 'accepted', headers };
  }
  let answer: Record<string, unknown> | undefined;
  if (isEventStream(headers)) {
    await eachSseMessage(res.body, (m) => {
      if (m.id === message.id && ('result' in m || 'error' in m)) {
        answer = m;
        return true;
      }
      x.onMessage?.(m);
      return false;
    });
  } else {
    const parsed = parseJson(await readText(res.body, MAX_REPLY_BYTES));
    if (!isRecord(parsed)) throw new LinkError('malformed_reply');
    if (parsed.id === message.id) answer = parsed;
  }
  if (answer === undefined) throw new LinkError('no_reply');
  if ('error' in answer) {
    const error = rpcErrorOf(answer);
    if (error === undefined) throw new LinkError('malformed_reply');
    return { kind: 'reply', error, headers };
  }
  return { kind: 'reply', result: answer.result, headers };
}

/**
 * Opens a long-lived SSE stream (the 2025 GET stream, or a 2026-07-28
 * `subscriptions/listen` POST). `headersTimeoutMs` bounds the wait for the
 * answer; a quiet stream may then stay open indefinitely.
 */
export async function openStream(
  x: Exchange,
  method: 'GET' | 'POST',
  body: string | undefined,
  headersTimeoutMs: number,
): Promise<
  | { readonly kind: 'open'; readonly body: Dispatcher.ResponseData['body'] }
  | { readonly kind: 'refused'; readonly status: number }
> {
  const res = await x.dispatcher.request({
    ...target(x.url),
    method,
    // A POST that opens a stream is still a JSON-RPC request, so it takes both answers; a GET only the stream.
    headers: {
      ...x.headers,
      ...(body === undefined
        ? { accept: 'text/event-stream' }
        : { accept: 'application/json, text/event-stream', 'content-type': 'application/json' }),
    },
    body,
    signal: x.signal,
    headersTimeout: headersTimeoutMs,
    bodyTimeout: 0,
  });
  if (res.statusCode >= 200 && res.statusCode <= 299 && isEventStream(res.headers))
    return { kind: 'open', body: res.body };
  res.body.resume();
  return { kind: 'refused', status: res.statusCode };
}

/** Ends a 2025 session (DELETE with its `Mcp-Session-Id`); the answer does not matter. */
export async function endSession(x: Exchange): Promise<void> {
  const res = await x.dispatcher.request({ ...target(x.url), method: 'DELETE', headers: x.headers, signal: x.signal });
  res.body.resume();
}

/**
 * Feeds each JSON message of an SSE body to `visit` until it returns true or
 * the stream ends. Events of other types, and data that is not a JSON
 * object, are skipped, as the SSE rules skip what a client does not know.
 */
export async function eachSseMessage(
  body: Dispatcher.ResponseData['body'],
  visit: (message: Record<string, unknown>) => boolean,
): Promise<void> {
  let done = false;
  let pending = 0;
  const parser = createParser({
    onEvent: (event) => {
      pending = 0;
      if (done || (event.event !== undefined && event.event !== 'message')) return;
      const message = parseJson(event.data);
      if (isRecord(message) && visit(message)) done = true;
    },
  });
  // A UTF-8 sequence may be split between chunks: the decoder holds its start until the rest arrives.
  const utf8 = new TextDecoder();
  for await (const chunk of body as AsyncIterable<Buffer>) {
    pending += chunk.length;
    if (pending > MAX_REPLY_BYTES) throw new LinkError('reply_too_large');
    parser.feed(utf8.decode(chunk, { stream: true }));
    if (done) break;
  }
}

function target(url: URL): { origin: string; path: string } {
  return { origin: url.origin, path: `${url.pathname}${url.search}` };
}

function isEventStream(headers: IncomingHttpHeaders): boolean {
  const type = headers['content-type'];
  return typeof type === 'string' && type.trim().toLowerCase().startsWith('text/event-stream');
}

async function readText(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw new LinkError('reply_too_large');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function rpcErrorOf(message: unknown): RpcError | undefined {
  const error = isRecord(message) ? message.error : undefined;
  if (!isRecord(error) || typeof error.code !== 'number' || !Number.isInteger(error.code)) return undefined;
  return 'data' in error ? { code: error.code, data: error.data } : { code: error.code };
}
