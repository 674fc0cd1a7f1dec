import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher, Pool } from 'undici';
import type { ErrorId } from '../errors.ts';
import { clientResponseHeaders } from '../mcp/headers.ts';
import { sendError, type JsonRpcId } from '../mcp/jsonrpc.ts';
import { sseStream } from '../telemetry/channels.ts';
import { announceUpstream, withMetaFields, type UpstreamTiming } from './observe.ts';
import { SseInjector } from './sse-injector.ts';
import { log } from '../telemetry/log.ts';
import { upstreamErrorId, upstreamErrorLabel } from './errors.ts';

export type ForwardOutcome = 'forwarded' | 'client_closed' | ErrorId;

/**
 * Given the injector of a successful event-stream response, registers it to
 * receive toolgate's own events; returns what unregisters it.
 */
export type EventStreamHook = (injector: SseInjector) => () => void;

const BODY_LIMIT = 'TOOLGATE_BODY_LIMIT';

function isEventStream(contentType: string | string[] | undefined): boolean {
  return typeof contentType === 'string' && contentType.toLowerCase().startsWith('text/event-stream');
}

/**
 * Sends the request upstream and streams the response back as it arrives,
 * through a dispatch handler of its own rather than undici's stream(): each
 * chunk is written straight into the client response, and the upstream is
 * paused while the client's socket is full, so SSE events pass through
 * unbuffered with backpressure. A client that goes away aborts the upstream
 * request, before or after its response started.
 */
export function forward(
  pool: Pool,
  req: IncomingMessage,
  res: ServerResponse,
  requestHeaders: string[],
  body: Buffer | Readable | null,
  rpcId: JsonRpcId,
  options: ForwardOptions = {},
): Promise<ForwardOutcome> {
  // A client that left while the request waited (for a validator, a grant
  // lookup) already fired 'close', which the handler would never hear: its
  // upstream request would be sent for nobody and, once its answer filled the
  // dead socket, paused forever, holding a pool connection.
  if (res.destroyed) return Promise.resolve('client_closed');
  return new Promise((resolve) => {
    new ForwardHandler(pool, { req, res, requestHeaders, body, rpcId, ...options }, resolve);
  });
}

export interface ForwardOptions {
  /** The longest wait for the upstream's response head (a tool's own deadline). */
  readonly headersTimeoutMs?: number | undefined;
  readonly onEventStream?: EventStreamHook | undefined;
  /** Told the upstream's final status and headers before they go to the client. */
  readonly onResponseHead?: ResponseHeadHook | undefined;
}

export type ResponseHeadHook = (status: number, headers: Record<string, string | string[] | undefined>) => void;

interface UpstreamCall {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly requestHeaders: string[];
  readonly body: Buffer | Readable | null;
  readonly rpcId: JsonRpcId;
  readonly headersTimeoutMs?: number | undefined;
  readonly onEventStream?: EventStreamHook | undefined;
  readonly onResponseHead?: ResponseHeadHook | undefined;
}

type Controller = Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestStart']>>[0];

class ForwardHandler implements Dispatcher.DispatchHandler {
  readonly #res: ServerResponse;
  readonly #rpcId: JsonRpcId;
  readonly #timing: UpstreamTiming | undefined;
  readonly #done: (outcome: ForwardOutcome) => void;
  readonly #onEventStream: EventStreamHook | undefined;
  readonly #onResponseHead: ResponseHeadHook | undefined;
  #controller: Controller | undefined;
  #injector: SseInjector | undefined = undefined;
  #release: (() => void) | undefined = undefined;
  #clientGone = false;
  #started = false;
  #settled = false;
  #streaming = false;

  constructor(pool: Pool, call: UpstreamCall, done: (outcome: ForwardOutcome) => void) {
    const { req, res, requestHeaders, body, rpcId, headersTimeoutMs, onEventStream, onResponseHead } = call;
    this.#res = res;
    this.#rpcId = rpcId;
    this.#onEventStream = onEventStream;
    this.#onResponseHead = onResponseHead;
    this.#done = done;
    this.#timing = announceUpstream(req, requestHeaders);
    res.once('close', this.#onClientClose);
    if (body !== null && !Buffer.isBuffer(body)) body.once('error', (err) => this.#fail(err));
    pool.dispatch(
      {
        path: req.url ?? '/',
        method: req.method as Dispatcher.HttpMethod,
        headers: requestHeaders,
        body: Buffer.isBuffer(body) ? withMetaFields(body, this.#timing) : body,
        ...(headersTimeoutMs !== undefined && { headersTimeout: headersTimeoutMs }),
      },
      this,
    );
  }

  readonly #onClientClose = (): void => {
    if (this.#res.writableFinished) return;
    this.#clientGone = true;
    this.#controller?.abort(new Error('client closed'));
  };

  onRequestStart(controller: Controller): void {
    this.#controller = controller;
    if (this.#clientGone) controller.abort(new Error('client closed'));
  }

  onResponseStart(controller: Controller, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200) return;
    const res = this.#res;
    this.#started = true;
    this.#onResponseHead?.(statusCode, headers);
    res.writeHead(statusCode, clientResponseHeaders(headers));
    this.#timing?.answered(statusCode);
    if (isEventStream(headers['content-type'])) {
      res.flushHeaders();
      this.#streaming = sseStream.hasSubscribers;
      if (this.#streaming) sseStream.publish({ delta: 1 });
      if (this.#onEventStream !== undefined && statusCode === 200) {
        this.#injector = new SseInjector(res);
        this.#release = this.#onEventStream(this.#injector);
      }
    }
    res.on('drain', () => controller.resume());
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    if (!(this.#injector === undefined ? this.#res.write(chunk) : this.#injector.write(chunk))) controller.pause();
  }

  onResponseEnd(): void {
    this.#res.end();
    this.#timing?.ended();
    this.#settle('forwarded');
  }

  onResponseError(_controller: Controller, err: Error): void {
    this.#fail(err);
  }

  #fail(err: unknown): void {
    if (this.#settled) return;
    if (this.#clientGone) {
      this.#timing?.ended('client_closed');
      this.#settle('client_closed');
      return;
    }
    if ((err as { code?: unknown }).code === BODY_LIMIT) {
      this.#controller?.abort(err as Error);
      this.#timing?.ended('payload_too_large');
      sendError(this.#res, this.#rpcId, 'payload_too_large', undefined, { connection: 'close' });
      this.#settle('payload_too_large');
      return;
    }
    const id = upstreamErrorId(err);
    this.#timing?.ended(id);
    log.warn('upstream request failed', { error: upstreamErrorLabel(err), headersSent: this.#started });
    // Mid-stream there is no status left to send: sendError cuts the connection.
    sendError(this.#res, this.#rpcId, id);
    this.#settle(id);
  }

  #settle(outcome: ForwardOutcome): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#res.off('close', this.#onClientClose);
    this.#release?.();
    if (this.#streaming) sseStream.publish({ delta: -1 });
    this.#done(outcome);
  }
}
