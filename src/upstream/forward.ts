import { performance } from 'node:perf_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher, Pool } from 'undici';
import type { ErrorId } from '../errors.ts';
import { clientResponseHeaders } from '../mcp/headers.ts';
import { sendError, type JsonRpcId, type Refusal, type Refuser } from '../mcp/jsonrpc.ts';
import { deadlinePassed, sseStream } from '../telemetry/channels.ts';
import { announceUpstream, withMetaFields, type UpstreamTiming } from './observe.ts';
import { writeWhole } from './buffered.ts';
import { ResponseCapture } from './capture.ts';
import { EventTooLarge, SseEventFilter } from './sse-event-filter.ts';
import { SseInjector } from './sse-injector.ts';
import { log } from '../telemetry/log.ts';
import { upstreamErrorId, upstreamErrorLabel } from './errors.ts';
import { bodyIdleMs } from './pool.ts';

export type ForwardOutcome = 'forwarded' | 'client_closed' | ErrorId;

/** What an attempt saw of the upstream, for a caller that must tell "never ran" from "may have run". */
interface Seen {
  /** The upstream's final status, 0 when no response head arrived. */
  readonly status: number;
  /** The connection was refused: the request certainly never reached the upstream. */
  readonly refused: boolean;
}

/**
 * How an attempt ended: the client has its answer (or a cut stream), or
 * nothing reached the client and the refusal is the caller's to write.
 */
export type Settled = Seen &
  (
    | { readonly kind: 'sent'; readonly outcome: ForwardOutcome }
    | { readonly kind: 'unsent'; readonly refusal: Refusal }
  );

/**
 * A transient failure before any byte reached the client: refused or reset
 * before the response head (`connect`), or a 429, 502, 503 or 504 head
 * (`status_<code>`), held paused. The caller decides at once: `pass()` lets
 * the client have it as it came, `drop()` ends it unseen, for a retry.
 */
export type Transient = Seen & {
  readonly kind: 'transient';
  readonly reason: string;
  /** The upstream's Retry-After, in milliseconds, when it sent one. */
  readonly retryAfterMs: number | undefined;
  pass(): Promise<Settled>;
  drop(): void;
};

export type AttemptEnd = Settled | Transient;

const TRANSIENT_STATUSES = new Set([429, 502, 503, 504]);
const CONNECT_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE']);
const PROGRESS = Buffer.from('notifications/progress');

/**
 * Given the injector of a successful event-stream response, registers it to
 * receive toolgate's own events; returns what unregisters it.
 */
export type EventStreamHook = (injector: SseInjector) => () => void;

const BODY_LIMIT = 'TOOLGATE_BODY_LIMIT';

function isEventStream(contentType: string | string[] | undefined): boolean {
  return typeof contentType === 'string' && contentType.toLowerCase().startsWith('text/event-stream');
}

function isJson(contentType: string | string[] | undefined): boolean {
  return typeof contentType === 'string' && contentType.toLowerCase().startsWith('application/json');
}

function declaredLength(value: string | string[] | undefined): number | undefined {
  return typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}

const CLIENT_CLOSED: Settled = Object.freeze({ kind: 'sent', outcome: 'client_closed', status: 0, refused: false });
/** How nearly every exchange ends, shared rather than built per request. */
const FORWARDED_200: Settled = Object.freeze({ kind: 'sent', outcome: 'forwarded', status: 200, refused: false });

/**
 * One upstream exchange, reported rather than refused: sends the request and
 * streams the response back as it arrives, through a dispatch handler of its
 * own rather than undici's stream(). Each chunk is written straight into the
 * client response, and the upstream is paused while the client's socket is
 * full, so SSE events pass through unbuffered with backpressure. A client
 * that goes away aborts the upstream request, before or after its response
 * started.
 *
 * It writes to the client only once the response has started there; a
 * failure before that comes back as `unsent` or `transient`, for the caller
 * to answer or retry.
 */
export function attempt(pool: Pool, call: UpstreamCall): Promise<AttemptEnd> {
  // A client that left while the request waited (for a validator, a grant
  // lookup) already fired 'close', which the handler would never hear: its
  // upstream request would be sent for nobody and, once its answer filled the
  // dead socket, paused forever, holding a pool connection.
  if (call.res.destroyed) return Promise.resolve(CLIENT_CLOSED);
  return new Promise((resolve) => {
    // oxlint-disable-next-line no-new -- its constructor dispatches it to the pool, which holds it until it settles `resolve`
    new ForwardHandler(pool, call, resolve);
  });
}

/**
 * One attempt, taken as it comes: a transient failure goes to the client,
 * and a refusal before the response is written with `refuse`, or as a plain
 * JSON-RPC error.
 */
export async function forward(
  pool: Pool,
  request: UpstreamRequest,
  options: ForwardOptions = {},
): Promise<ForwardOutcome> {
  const ended = await attempt(pool, {
    ...options,
    req: request.req,
    res: request.res,
    headers: request.headers,
    body: request.body,
    rpcId: request.rpcId,
  });
  const end = ended.kind === 'transient' ? await ended.pass() : ended;
  if (end.kind === 'sent') return end.outcome;
  const { refusal } = end;
  if (options.refuse === undefined)
    sendError(request.res, idOf(request.rpcId), refusal.error, refusal.data, refusal.headers);
  else options.refuse(refusal);
  return refusal.error;
}

interface AttemptOptions extends Hooks {
  /**
   * The exchange's deadline, response body included: when it passes the
   * upstream request is aborted (its connection closed), and the attempt
   * ends `unsent` with the deadline's refusal, or cuts a started response.
   */
  readonly deadline?: AttemptDeadline | undefined;
  /** Each response body chunk, as it goes to the client. */
  readonly onResponseChunk?: ((chunk: Buffer) => void) | undefined;
  /**
   * Holds a 200 response from the client until its JSON-RPC answer is read
   * (the whole body, or the answering event of a stream, up to `maxBytes`)
   * and `until` settled: what must be recorded before the client can act on
   * the answer (the task a call created).
   */
  readonly holdAnswer?: AnswerHold | undefined;
}

/**
 * What the result guard makes of an answer. forward() only holds, measures
 * and writes; the judging is the caller's.
 */
export interface AnswerGuard {
  /** A JSON body, or one event of a stream, larger than this is not passed on: the upstream request is aborted. */
  readonly maxBytes: number;
  /** Given a JSON body or an event's data: what to send instead, or undefined to send it as it came. */
  judge(text: string): GuardedAnswer | undefined;
  /** What the client gets instead of an answer over `maxBytes`; `size` when the upstream declared it. */
  tooLarge(size: number | undefined): GuardedAnswer;
}

/** A JSON-RPC message toolgate sends in place of the upstream's, with the status for a JSON answer (a stream's is already sent). */
export interface GuardedAnswer {
  readonly status: number;
  readonly body: string;
  /** The refusal the body carries, when the answer was withheld: the exchange's outcome, for metrics and audit. */
  readonly refusal?: ErrorId | undefined;
}

export interface AnswerHold {
  readonly maxBytes: number;
  /** Never rejects; `answer` is undefined when it could not be read or held. */
  until(answer: Readonly<Record<string, unknown>> | undefined): Promise<void>;
}

interface HeldResponse {
  /** Reads the answer for `holdAnswer`; undefined when only the guard holds the response. */
  readonly capture: ResponseCapture | undefined;
  /** A JSON answer the guard judges whole: held to its end, never released early. */
  readonly guarded: boolean;
  readonly chunks: Buffer[];
  bytes: number;
  readonly statusCode: number;
  readonly headers: Record<string, string | string[] | undefined>;
  ended: boolean;
  releasing: boolean;
}

interface AttemptDeadline {
  readonly remainingMs: number;
  /** A progress notification on the stream starts the deadline over. */
  readonly resetOnProgress: boolean;
  /** The refusal when it passes. */
  readonly refusal: Refusal;
}

export interface ForwardOptions extends Hooks {
  /** How a refusal before the response head is written; a plain JSON-RPC error without one. */
  readonly refuse?: Refuser | undefined;
}

/** What the caller sees of, and adds to, the response as it passes. */
interface Hooks {
  readonly onEventStream?: EventStreamHook | undefined;
  /** Told the upstream's final status and headers before they go to the client. */
  readonly onResponseHead?: ResponseHeadHook | undefined;
  /** On an event stream: events this says to drop (judged on their `data:`) never reach the client. */
  readonly dropEvent?: ((data: string) => boolean) | undefined;
  /** Judges a 200 answer before it reaches the client (the result guard): a JSON body whole, a stream event by event. */
  readonly guardAnswer?: AnswerGuard | undefined;
}

/** The largest single event a stream with `dropEvent` holds to judge; a larger one ends the stream. */
const MAX_JUDGED_EVENT_BYTES = 16 * 1024 * 1024;

export type ResponseHeadHook = (status: number, headers: Record<string, string | string[] | undefined>) => void;

/** One request for the upstream, and the client response its answer goes to. */
export interface UpstreamRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The request headers as the upstream gets them, as undici's flat name/value list. */
  readonly headers: string[];
  readonly body: Buffer | Readable | null;
  /** The id an error answered in the upstream's place carries; a function when it is read only if needed. */
  readonly rpcId: JsonRpcId | (() => JsonRpcId);
}

function idOf(rpcId: UpstreamRequest['rpcId']): JsonRpcId {
  return typeof rpcId === 'function' ? rpcId() : rpcId;
}

/** One attempt's request and how it is watched, in one object: the call path builds it once. */
export type UpstreamCall = AttemptOptions & UpstreamRequest;

type Controller = Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestStart']>>[0];

class ForwardHandler implements Dispatcher.DispatchHandler {
  readonly #res: ServerResponse;
  readonly #rpcId: UpstreamRequest['rpcId'];
  readonly #timing: UpstreamTiming | undefined;
  /** Resolves the attempt with a transient failure, for the caller to pass or drop. */
  readonly #transient: (end: Transient) => void;
  /** Resolves the attempt settled; a passed transient settles through a fresh promise. */
  #resolve: (end: Settled) => void;
  /** The upstream's final status, 0 before a response head. */
  #status = 0;
  #refused = false;
  readonly #onEventStream: EventStreamHook | undefined;
  readonly #onResponseHead: ResponseHeadHook | undefined;
  readonly #call: UpstreamCall;
  #deadlineTimer: NodeJS.Timeout | undefined;
  /** When the deadline timer fires (performance.now() time); Infinity without one. */
  #deadlineAt = Infinity;
  /** The deadline is known to end the exchange before a silence could reach the idle bound. */
  #deadlineFirst = false;
  /** The tail of the previous chunk, so a progress marker split across chunks is still seen. */
  #tail: Buffer | undefined;
  #controller: Controller | undefined;
  #injector: SseInjector | undefined = undefined;
  #filter: SseEventFilter | undefined = undefined;
  /** A response held until its answer is read (`holdAnswer`): nothing of it has reached the client yet. */
  #held: HeldResponse | undefined = undefined;
  #release: (() => void) | undefined = undefined;
  #clientGone = false;
  #started = false;
  #settled = false;
  #streaming = false;
  readonly #bodyIdleMs: number;
  #eventStream = false;
  #idleTimer: NodeJS.Timeout | undefined;
  /** A stream's answer the guard withheld: the outcome once the stream ends. */
  #withheld: ErrorId | undefined;

  constructor(pool: Pool, call: UpstreamCall, resolve: (end: AttemptEnd) => void) {
    const { req, res, headers: requestHeaders, body, rpcId, onEventStream, onResponseHead } = call;
    this.#call = call;
    this.#res = res;
    this.#rpcId = rpcId;
    this.#onEventStream = onEventStream;
    this.#onResponseHead = onResponseHead;
    this.#transient = resolve;
    this.#resolve = resolve;
    this.#bodyIdleMs = bodyIdleMs(pool);
    this.#timing = announceUpstream(req, requestHeaders);
    // 'close' comes once per response: on() spares once()'s wrapper, and #finish() takes it off.
    res.on('close', this.#onClientClose);
    if (call.deadline !== undefined) this.#armDeadline(call.deadline.remainingMs);
    if (body !== null && !Buffer.isBuffer(body)) body.once('error', (err) => this.#fail(err));
    pool.dispatch(
      {
        path: req.url ?? '/',
        method: req.method as Dispatcher.HttpMethod,
        headers: requestHeaders,
        body: Buffer.isBuffer(body) ? withMetaFields(body, this.#timing) : body,
      },
      this,
    );
  }

  #armDeadline(ms: number): void {
    clearTimeout(this.#deadlineTimer);
    this.#deadlineAt = performance.now() + ms;
    this.#deadlineTimer = setTimeout(this.#onDeadline, ms);
    // Known now, without reading the clock again when the body starts: a silence could never outlast it.
    if (ms <= this.#bodyIdleMs && this.#call.deadline?.resetOnProgress === false) this.#deadlineFirst = true;
  }

  readonly #onDeadline = (): void => {
    if (this.#settled) return;
    this.#timing?.ended('deadline_exceeded');
    if (deadlinePassed.hasSubscribers) deadlinePassed.publish({ phase: 'in_flight' });
    this.#refuse((this.#call.deadline as AttemptDeadline).refusal);
    // Aborting closes the upstream connection: the server sees the call end, not just toolgate stop waiting.
    this.#controller?.abort(new Error('deadline passed'));
  };

  readonly #onClientClose = (): void => {
    if (this.#res.writableFinished) return;
    this.#clientGone = true;
    this.#controller?.abort(new Error('client closed'));
  };

  onRequestStart(controller: Controller): void {
    this.#controller = controller;
    if (this.#clientGone) controller.abort(new Error('client closed'));
    else if (this.#settled) controller.abort(new Error('deadline passed'));
  }

  onResponseStart(
    controller: Controller,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200) return;
    this.#status = statusCode;
    if (!TRANSIENT_STATUSES.has(statusCode)) {
      this.#respond(controller, statusCode, headers);
      return;
    }
    // Held paused, body unread, while the caller decides: the parser would otherwise go on into the body.
    controller.pause();
    this.#transient({
      kind: 'transient',
      reason: `status_${statusCode}`,
      retryAfterMs: retryAfterMs(headers['retry-after']),
      status: statusCode,
      refused: false,
      pass: () =>
        new Promise<Settled>((resolve) => {
          this.#resolve = resolve;
          this.#respond(controller, statusCode, headers);
          controller.resume();
        }),
      drop: () => {
        this.#timing?.answered(statusCode);
        this.#timing?.ended();
        this.#finish();
        controller.abort(new Error('retrying'));
      },
    });
  }

  /** A response head for the client: sent on, or held for the answer's hold or guard. */
  #respond(controller: Controller, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    this.#started = true;
    this.#onResponseHead?.(statusCode, headers);
    const hold = this.#call.holdAnswer;
    const guard = this.#call.guardAnswer;
    const guarded = guard !== undefined && statusCode === 200 && isJson(headers['content-type']);
    if (guarded) {
      const declared = declaredLength(headers['content-length']);
      if (declared !== undefined && declared > guard.maxBytes) {
        this.#cut(controller, declared);
        return;
      }
    }
    if (statusCode === 200 && (hold !== undefined || guarded)) {
      const capture = hold === undefined ? undefined : new ResponseCapture(idOf(this.#rpcId), hold.maxBytes);
      capture?.head(statusCode, headers);
      // A held stream keeps the exemption from the idle bound that every event stream has.
      this.#eventStream = isEventStream(headers['content-type']);
      this.#held = { capture, guarded, chunks: [], bytes: 0, statusCode, headers, ended: false, releasing: false };
      this.#armIdle();
      return;
    }
    this.#startClient(controller, statusCode, headers);
  }

  /** The response head goes to the client, and the body after it as it comes. */
  #startClient(
    controller: Controller,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    const res = this.#res;
    res.writeHead(statusCode, clientResponseHeaders(headers));
    this.#timing?.answered(statusCode);
    if (isEventStream(headers['content-type'])) {
      this.#eventStream = true;
      res.flushHeaders();
      this.#streaming = sseStream.hasSubscribers;
      if (this.#streaming) sseStream.publish({ delta: 1 });
      if (this.#onEventStream !== undefined && statusCode === 200) {
        this.#injector = new SseInjector(res);
        this.#release = this.#onEventStream(this.#injector);
      }
      const drop = this.#call.dropEvent;
      const guard = statusCode === 200 ? this.#call.guardAnswer : undefined;
      if (drop !== undefined || guard !== undefined) {
        const injector = this.#injector;
        const judge = (data: string): string | null | undefined => {
          if (drop?.(data) === true) return null;
          const judged = guard?.judge(data);
          if (judged?.refusal !== undefined) this.#withheld = judged.refusal;
          return judged?.body;
        };
        this.#filter = new SseEventFilter(
          judge,
          injector === undefined ? (c) => res.write(c) : (c) => injector.write(c),
          guard?.maxBytes ?? MAX_JUDGED_EVENT_BYTES,
        );
      }
    }
    this.#armIdle();
  }

  /**
   * Sees a held response's answer (undefined when it could not be read or
   * was too large to hold), lets `holdAnswer` settle, then sends what was
   * held and streams the rest. Nothing is sent if the deadline passed or the
   * client left meanwhile.
   */
  #releaseHeld(controller: Controller, answer: Readonly<Record<string, unknown>> | undefined): void {
    const held = this.#held;
    const hold = this.#call.holdAnswer;
    if (held === undefined || held.releasing) return;
    held.releasing = true;
    if (!held.ended) controller.pause();
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    const until =
      hold === undefined
        ? Promise.resolve()
        : Promise.resolve()
            .then(() => hold.until(answer))
            .catch(() => undefined);
    void until.then(() => {
      if (this.#settled) return;
      this.#held = undefined;
      if (held.guarded) {
        this.#sendGuarded(held);
        return;
      }
      this.#startClient(controller, held.statusCode, held.headers);
      for (const chunk of held.chunks) {
        if (!this.#pass(controller, chunk) && this.#settled) return;
      }
      if (!held.ended) {
        controller.resume();
        return;
      }
      this.#res.end();
      this.#timing?.ended();
      this.#settle('forwarded');
    });
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    if (this.#settled) return;
    this.#call.onResponseChunk?.(chunk);
    const deadline = this.#call.deadline;
    if (deadline?.resetOnProgress === true && this.#sawProgress(chunk)) this.#armDeadline(deadline.remainingMs);
    const held = this.#held;
    if (held !== undefined) {
      held.chunks.push(chunk);
      held.bytes += chunk.length;
      if (held.guarded && held.bytes > (this.#call.guardAnswer?.maxBytes ?? 0)) {
        this.#cut(controller, undefined);
        return;
      }
      if (held.releasing) return;
      if (held.capture === undefined) {
        this.#armIdle();
        return;
      }
      held.capture.chunk(chunk);
      const seen = this.#eventStream ? held.capture.result() : undefined;
      // A guarded JSON answer is judged whole: the task's answer is read at its end.
      if (held.guarded) this.#armIdle();
      else if (seen?.kind === 'response') this.#releaseHeld(controller, seen.response.message);
      else if (seen?.kind === 'too_large' || held.bytes > (this.#call.holdAnswer?.maxBytes ?? 0))
        this.#releaseHeld(controller, undefined);
      else this.#armIdle();
      return;
    }
    if (this.#pass(controller, chunk)) {
      this.#armIdle();
      return;
    }
    if (this.#settled) return;
    // Waiting on a slow client is not upstream silence.
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    controller.pause();
    // Listened for only while paused: most answers never fill the client's socket.
    this.#res.once('drain', () => {
      this.#armIdle();
      controller.resume();
    });
  }

  /**
   * Writes an upstream chunk on toward the client, through the event filter
   * or the injector when there is one; false when the client's socket is
   * full, or when the chunk ended the exchange (check `#settled`).
   */
  #pass(controller: Controller, chunk: Buffer): boolean {
    try {
      return this.#filter !== undefined
        ? this.#filter.write(chunk)
        : this.#injector === undefined
          ? this.#res.write(chunk)
          : this.#injector.write(chunk);
    } catch (err) {
      if (err instanceof EventTooLarge && this.#call.guardAnswer !== undefined) this.#cut(controller, undefined);
      else {
        controller.abort(err as Error);
        this.#fail(err);
      }
      return false;
    }
  }

  /** Sends a guarded JSON answer, judged whole, in place of what the upstream sent, or as it came. */
  #sendGuarded(held: HeldResponse): void {
    const body = Buffer.concat(held.chunks, held.bytes);
    const judged = this.#call.guardAnswer?.judge(body.toString('utf8'));
    this.#sendWhole(
      judged?.status ?? held.statusCode,
      held.headers,
      judged === undefined ? body : Buffer.from(judged.body),
    );
    this.#timing?.ended();
    this.#settle(judged?.refusal ?? 'forwarded');
  }

  #sendWhole(status: number, headers: Record<string, string | string[] | undefined>, body: Buffer): void {
    this.#timing?.answered(status);
    writeWhole(this.#res, status, headers, body);
  }

  /**
   * An answer over the guard's bound: the client gets the guard's word in
   * its place (a JSON answer, or a last event on a stream that so far ends
   * at an event boundary), and the upstream request is aborted.
   */
  #cut(controller: Controller, size: number | undefined): void {
    const guard = this.#call.guardAnswer;
    if (guard === undefined || this.#settled) return;
    const answer = guard.tooLarge(size);
    if (this.#res.headersSent) this.#res.end(`data: ${answer.body}\n\n`);
    else this.#sendWhole(answer.status, { 'content-type': 'application/json' }, Buffer.from(answer.body));
    this.#timing?.ended();
    this.#settle(answer.refusal ?? 'forwarded');
    controller.abort(new Error('result over the guard bound'));
  }

  /**
   * An upstream that sent its head and then went quiet would hold the client
   * and a pool connection for ever; event streams are exempt (they are quiet
   * by nature and end when either side closes).
   */
  #armIdle(): void {
    if (this.#bodyIdleMs === 0 || this.#settled || this.#eventStream || this.#deadlineComesFirst()) return;
    // Re-armed on every chunk: refresh() moves the one timer rather than making a new one each time.
    if (this.#idleTimer === undefined) this.#idleTimer = setTimeout(this.#onIdle, this.#bodyIdleMs);
    else this.#idleTimer.refresh();
  }

  /**
   * Whether the call's deadline passes before any silence could reach the
   * idle bound, so the deadline alone bounds the body: a tool's timeout is
   * usually no longer than the bound, and a second timer per call is then
   * never the one that fires. Once true it stays true (the deadline only
   * comes closer, a silence only ends later), unless progress can push the
   * deadline back.
   */
  #deadlineComesFirst(): boolean {
    if (this.#deadlineFirst) return true;
    if (this.#call.deadline === undefined || this.#call.deadline.resetOnProgress) return false;
    this.#deadlineFirst = this.#deadlineAt <= performance.now() + this.#bodyIdleMs;
    return this.#deadlineFirst;
  }

  readonly #onIdle = (): void => {
    const err = Object.assign(new Error('upstream body idle'), { code: 'UND_ERR_BODY_TIMEOUT' });
    this.#controller?.abort(err);
    this.#fail(err);
  };

  #sawProgress(chunk: Buffer): boolean {
    const seen = (this.#tail === undefined ? chunk : Buffer.concat([this.#tail, chunk])).includes(PROGRESS);
    this.#tail = chunk.subarray(Math.max(0, chunk.length - PROGRESS.length + 1));
    return seen;
  }

  onResponseEnd(controller: Controller): void {
    if (this.#settled) return;
    const held = this.#held;
    if (held !== undefined) {
      held.ended = true;
      const seen = held.capture?.result();
      this.#releaseHeld(controller, seen?.kind === 'response' ? seen.response.message : undefined);
      return;
    }
    this.#res.end();
    this.#timing?.ended();
    this.#settle(this.#withheld ?? 'forwarded');
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
      this.#refuse({ error: 'payload_too_large', headers: { connection: 'close' } });
      return;
    }
    const code = upstreamErrorLabel(err);
    if (code === 'ECONNREFUSED') this.#refused = true;
    const id = upstreamErrorId(err);
    const failed = (): void => {
      this.#timing?.ended(id);
      log.warn('upstream request failed', { error: code, headersSent: this.#started });
    };
    if (!this.#started && CONNECT_FAILURES.has(code)) {
      this.#finish();
      const unsent: Settled = { kind: 'unsent', refusal: { error: id }, status: this.#status, refused: this.#refused };
      this.#transient({
        kind: 'transient',
        reason: 'connect',
        retryAfterMs: undefined,
        status: this.#status,
        refused: this.#refused,
        pass: () => {
          failed();
          return Promise.resolve(unsent);
        },
        drop: () => this.#timing?.ended('upstream_unavailable'),
      });
      return;
    }
    failed();
    this.#refuse({ error: id });
  }

  /** Ends the attempt refused: the caller answers, or, mid-stream, where no status is left to send, the connection is cut. */
  #refuse(refusal: Refusal): void {
    if (!this.#res.headersSent) {
      this.#settle({ kind: 'unsent', refusal, status: this.#status, refused: this.#refused });
      return;
    }
    sendError(this.#res, idOf(this.#rpcId), refusal.error, refusal.data, refusal.headers);
    this.#settle(refusal.error);
  }

  #settle(outcome: ForwardOutcome | Settled): void {
    if (this.#settled) return;
    this.#finish();
    if (typeof outcome !== 'string') this.#resolve(outcome);
    else if (outcome === 'forwarded' && this.#status === 200) this.#resolve(FORWARDED_200);
    else this.#resolve({ kind: 'sent', outcome, status: this.#status, refused: this.#refused });
  }

  /** Lets go of everything the exchange holds: timers, the client's close listener, the injector's registration. */
  #finish(): void {
    this.#settled = true;
    clearTimeout(this.#deadlineTimer);
    clearTimeout(this.#idleTimer);
    this.#res.off('close', this.#onClientClose);
    this.#release?.();
    if (this.#streaming) sseStream.publish({ delta: -1 });
  }
}

/** Retry-After as delay-seconds (the form upstreams use for 429/503); a date or nonsense reads as absent. */
function retryAfterMs(value: string | string[] | undefined): number | undefined {
  return typeof value === 'string' && /^\d{1,6}$/.test(value.trim()) ? Number(value.trim()) * 1000 : undefined;
}
