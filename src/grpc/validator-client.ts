/**
 * Calls one external validator's `Validate` and reduces the answer to a
 * closed outcome. Anything other than a well-formed answer within the
 * deadline (a timeout, a refused connection, a crash, a message that does
 * not decode, `valid: false` without a severity) is a failure, which the
 * interceptor turns into a refusal unless the validator fails open. The
 * validator's free-text message is never read.
 *
 * Each call is one gRPC unary exchange on a node:http2 session kept open per
 * target: the request as one length-prefixed message, `grpc-timeout` from
 * the deadline, the status from the trailers. That is all a unary call
 * needs, and `npm run bench:validator` measured what more costs, client side,
 * per call: grpc-js 149 µs, @connectrpc/connect-node 350 µs, this 54 µs.
 * proto/ stays the contract: messages are encoded and decoded with the
 * definitions loaded from it, as the gRPC services are.
 */
import { connect as http2Connect, constants, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { serviceDefinition } from './definitions.ts';
import type { ValidateRequest } from './generated/toolgate/v1/ValidateRequest.ts';
import type { ValidateResponse__Output } from './generated/toolgate/v1/ValidateResponse.ts';
import type { ValidatorCaller, ValidatorOutcome } from '../interceptors/external-validator.ts';

/** Largest answer a validator may send; anything larger is malformed. */
const MAX_ANSWER_BYTES = 64 * 1024;
const CODE = /^[a-z0-9_]{1,64}$/;
const SEVERITIES = { SEVERITY_INFO: 'info', SEVERITY_WARNING: 'warning', SEVERITY_ERROR: 'error' } as const;
/** A target that could not be reached is not dialled again for this long, doubling to the most: a restarted validator is asked again promptly. */
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 1000;
/** gRPC status codes read here (the rest are `unavailable`). */
const DEADLINE_EXCEEDED = '4';
const INTERNAL = '13';
const FRAME_HEADER = 5;

const UNAVAILABLE: ValidatorOutcome = Object.freeze({ kind: 'failed', reason: 'unavailable' });
const TIMEOUT: ValidatorOutcome = Object.freeze({ kind: 'failed', reason: 'timeout' });
const MALFORMED: ValidatorOutcome = Object.freeze({ kind: 'failed', reason: 'malformed' });

type Method = ReturnType<typeof validateMethod>;
let method: Method | undefined;

function validateMethod() {
  const m = serviceDefinition('toolgate.v1.Validator').Validate;
  if (m === undefined) throw new TypeError('no Validate method in proto/toolgate/v1/validator.proto');
  return {
    path: m.path,
    serialize: m.requestSerialize as (r: ValidateRequest) => Buffer,
    deserialize: m.responseDeserialize as (b: Buffer) => ValidateResponse__Output,
  };
}

/** One HTTP/2 session per target, shared by every validator entry and policy version naming it. */
export class ValidatorClients implements ValidatorCaller {
  readonly #targets = new Map<string, Target>();

  validate(target: string, request: ValidateRequest, timeoutMs: number): Promise<ValidatorOutcome> {
    const session = this.#target(target).session();
    if (session === undefined) return Promise.resolve(UNAVAILABLE);
    const m = (method ??= validateMethod());
    const message = m.serialize(request);
    const frame = Buffer.allocUnsafe(FRAME_HEADER + message.length);
    frame[0] = 0;
    frame.writeUInt32BE(message.length, 1);
    message.copy(frame, FRAME_HEADER);
    return unary(session, m, frame, timeoutMs);
  }

  /** Starts connecting to `target` now, so the first call does not spend its deadline on the handshake. */
  connect(target: string): void {
    this.#target(target).session();
  }

  close(): void {
    for (const t of this.#targets.values()) t.close();
    this.#targets.clear();
  }

  #target(target: string): Target {
    let t = this.#targets.get(target);
    if (t === undefined) this.#targets.set(target, (t = new Target(target)));
    return t;
  }
}

/** One validator endpoint: its session, dialled again after it closes, with a short backoff after a failed dial. */
class Target {
  readonly #url: string;
  readonly #socketPath: string | undefined;
  #session: ClientHttp2Session | undefined;
  #backoffMs = 0;
  #dialAfter = 0;

  constructor(target: string) {
    // The target forms the policy accepts: host:port, dns:///host:port, unix:/path (or unix:///path).
    if (target.startsWith('unix:')) {
      this.#url = 'http://localhost';
      this.#socketPath = target.slice('unix:'.length).replace(/^\/\/(?=\/)/, '');
    } else {
      this.#url = `http://${target.replace(/^dns:\/\/\//, '')}`;
      this.#socketPath = undefined;
    }
  }

  /** The open session, or a new one; undefined while a failed dial's backoff runs. */
  session(): ClientHttp2Session | undefined {
    const open = this.#session;
    if (open !== undefined && !open.closed && !open.destroyed) return open;
    if (performance.now() < this.#dialAfter) return undefined;
    const socketPath = this.#socketPath;
    const session = http2Connect(
      this.#url,
      socketPath === undefined ? {} : { createConnection: () => netConnect(socketPath) },
    );
    this.#session = session;
    // An idle session must not keep a stopping process alive.
    session.unref();
    let connected = false;
    session.once('connect', () => {
      connected = true;
      this.#backoffMs = 0;
    });
    session.on('error', () => {
      if (!connected) {
        this.#backoffMs = Math.min(MAX_BACKOFF_MS, this.#backoffMs === 0 ? FIRST_BACKOFF_MS : this.#backoffMs * 2);
        this.#dialAfter = performance.now() + this.#backoffMs;
      }
    });
    // After GOAWAY or close, calls in flight finish on it; new ones dial again.
    const forget = (): void => {
      if (this.#session === session) this.#session = undefined;
    };
    session.once('goaway', forget);
    session.once('close', forget);
    return session;
  }

  close(): void {
    this.#session?.close();
    this.#session = undefined;
  }
}

/** One unary exchange; never rejects. */
function unary(session: ClientHttp2Session, m: Method, frame: Buffer, timeoutMs: number): Promise<ValidatorOutcome> {
  return new Promise((resolve) => {
    let stream: ClientHttp2Stream;
    try {
      stream = session.request({
        ':method': 'POST',
        ':path': m.path,
        'content-type': 'application/grpc',
        te: 'trailers',
        'grpc-timeout': `${Math.max(1, Math.ceil(timeoutMs))}m`,
      });
    } catch {
      // The session closed between the check and the request.
      resolve(UNAVAILABLE);
      return;
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    let status: string | undefined;
    let httpOk = false;
    let settled = false;
    const settle = (outcome: ValidatorOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!stream.closed) stream.close(constants.NGHTTP2_CANCEL);
      resolve(outcome);
    };
    const timer = setTimeout(() => settle(TIMEOUT), timeoutMs);
    stream.on('response', (headers) => {
      httpOk = headers[':status'] === 200 && (headers['content-type'] ?? '').startsWith('application/grpc');
      // A trailers-only answer (an error status, no message) carries grpc-status in its headers.
      if (typeof headers['grpc-status'] === 'string') status = headers['grpc-status'];
    });
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > FRAME_HEADER + MAX_ANSWER_BYTES) settle(MALFORMED);
      else chunks.push(chunk);
    });
    stream.on('trailers', (trailers) => {
      if (typeof trailers['grpc-status'] === 'string') status = trailers['grpc-status'];
    });
    stream.on('error', () => settle(UNAVAILABLE));
    stream.on('close', () => {
      if (!httpOk) settle(UNAVAILABLE);
      else if (status === DEADLINE_EXCEEDED) settle(TIMEOUT);
      else if (status === INTERNAL) settle(MALFORMED);
      else if (status !== '0') settle(UNAVAILABLE);
      else settle(decode(Buffer.concat(chunks, bytes), m.deserialize));
    });
    stream.end(frame);
  });
}

/** Exactly one uncompressed message, as the method's response type. */
function decode(body: Buffer, deserialize: Method['deserialize']): ValidatorOutcome {
  if (body.length < FRAME_HEADER || body[0] !== 0 || body.readUInt32BE(1) !== body.length - FRAME_HEADER)
    return MALFORMED;
  try {
    return interpret(deserialize(body.subarray(FRAME_HEADER)));
  } catch {
    return MALFORMED;
  }
}

export function interpret(value: ValidateResponse__Output | undefined): ValidatorOutcome {
  if (value === undefined || typeof value.valid !== 'boolean') return MALFORMED;
  if (value.valid) return { kind: 'valid' };
  const severity = SEVERITIES[value.severity as keyof typeof SEVERITIES];
  if (severity === undefined) return MALFORMED;
  return {
    kind: 'invalid',
    severity,
    code: typeof value.code === 'string' && CODE.test(value.code) ? value.code : undefined,
  };
}
