/**
 * Calls one external validator's `Validate` and reduces the answer to a
 * closed outcome. Anything other than a well-formed answer within the
 * deadline (a timeout, a refused connection, a crash, a message that does
 * not decode, `valid: false` without a severity) is a failure, which the
 * interceptor turns into a refusal unless the validator fails open. The
 * validator's free-text message is never read.
 *
 * Each call is one gRPC unary exchange on an HTTP/2 connection kept open
 * per target (h2/unary-connection.ts): the request as one length-prefixed
 * message, `grpc-timeout` from the deadline, the status from the trailers.
 * That is all a unary call needs, and `npm run bench:validator` measures
 * what more costs, client side, per call with 32 in flight: grpc-js 149 to
 * 230 µs, @connectrpc/connect-node 350 µs, a bare node:http2 stream 60 to
 * 90 µs, this connection 33 µs. proto/ stays the contract: messages are
 * encoded and decoded with the definitions loaded from it, as the gRPC
 * services are.
 */
import { serviceDefinition } from './definitions.ts';
import { UnaryConnection, type Address, type UnaryOutcome } from './h2/unary-connection.ts';
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
const OK = '0';
const DEADLINE_EXCEEDED = '4';
const INTERNAL = '13';
const FRAME_HEADER = 5;

const UNAVAILABLE: ValidatorOutcome = Object.freeze({ kind: 'failed', reason: 'unavailable' });
const TIMEOUT: ValidatorOutcome = Object.freeze({ kind: 'failed', reason: 'timeout' });
const MALFORMED: ValidatorOutcome = Object.freeze({ kind: 'failed', reason: 'malformed' });
/** A target in its dial backoff: the call is not made. */
const NOT_DIALLED: UnaryOutcome = Object.freeze({ kind: 'unavailable' });

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

/** One connection per target, shared by every validator entry and policy version naming it. */
export class ValidatorClients implements ValidatorCaller {
  readonly #targets = new Map<string, Target>();

  validate(target: string, request: ValidateRequest, timeoutMs: number): Promise<ValidatorOutcome> {
    const m = (method ??= validateMethod());
    const message = m.serialize(request);
    const deadline = performance.now() + timeoutMs;
    return this.#call(target, m.path, message, timeoutMs).then((outcome) => {
      if (outcome.kind !== 'unprocessed') return read(outcome, m.deserialize);
      // The validator never acted on it (a GOAWAY or REFUSED_STREAM, as in a rolling restart): ask once
      // more, on whatever connection the target has now, within what is left of the deadline.
      const left = deadline - performance.now();
      if (left < 1) return UNAVAILABLE;
      return this.#call(target, m.path, message, left).then((again) => read(again, m.deserialize));
    });
  }

  /** Starts connecting to `target` now, so the first call does not spend its deadline on the handshake. */
  connect(target: string): void {
    this.#target(target).connection();
  }

  close(): void {
    for (const t of this.#targets.values()) t.close();
    this.#targets.clear();
  }

  #call(target: string, path: string, message: Buffer, timeoutMs: number): Promise<UnaryOutcome> {
    const connection = this.#target(target).connection();
    if (connection === undefined) return Promise.resolve(NOT_DIALLED);
    return connection.call(path, message, timeoutMs, FRAME_HEADER + MAX_ANSWER_BYTES);
  }

  #target(target: string): Target {
    let t = this.#targets.get(target);
    if (t === undefined) this.#targets.set(target, (t = new Target(target)));
    return t;
  }
}

/** One validator endpoint: its connection, dialled again once it stops taking calls, with a short backoff after a failed dial. */
class Target {
  readonly #address: Address;
  readonly #authority: string;
  #connection: UnaryConnection | undefined;
  #backoffMs = 0;
  #dialAfter = 0;

  constructor(target: string) {
    // The target forms the policy accepts: host:port, dns:///host:port, unix:/path (or unix:///path).
    if (target.startsWith('unix:')) {
      this.#address = { path: target.slice('unix:'.length).replace(/^\/\/(?=\/)/, '') };
      this.#authority = 'localhost';
    } else {
      const url = new URL(`http://${target.replace(/^dns:\/\/\//, '')}`);
      this.#address = { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(url.port === '' ? 80 : url.port) };
      this.#authority = url.host;
    }
  }

  /** The connection taking calls, or a new one; undefined while a failed dial's backoff runs. */
  connection(): UnaryConnection | undefined {
    const open = this.#connection;
    if (open !== undefined && open.acceptsCalls) return open;
    if (performance.now() < this.#dialAfter) return undefined;
    const connection = new UnaryConnection(this.#address, this.#authority, {
      connected: () => {
        this.#backoffMs = 0;
      },
      gone: (connected) => {
        // Calls in flight finish on it; new ones dial again.
        if (this.#connection === connection) this.#connection = undefined;
        if (!connected) {
          this.#backoffMs = Math.min(MAX_BACKOFF_MS, this.#backoffMs === 0 ? FIRST_BACKOFF_MS : this.#backoffMs * 2);
          this.#dialAfter = performance.now() + this.#backoffMs;
        }
      },
    });
    this.#connection = connection;
    return connection;
  }

  close(): void {
    this.#connection?.close();
    this.#connection = undefined;
  }
}

/** The validator's outcome from the call's: any transport or gRPC failure is a failure, never a verdict. */
function read(outcome: UnaryOutcome, deserialize: Method['deserialize']): ValidatorOutcome {
  if (outcome.kind !== 'answer')
    return outcome.kind === 'timeout' ? TIMEOUT : outcome.kind === 'too_large' ? MALFORMED : UNAVAILABLE;
  if (outcome.httpStatus !== '200' || !(outcome.contentType ?? '').startsWith('application/grpc')) return UNAVAILABLE;
  if (outcome.grpcStatus === DEADLINE_EXCEEDED) return TIMEOUT;
  if (outcome.grpcStatus === INTERNAL) return MALFORMED;
  if (outcome.grpcStatus !== OK) return UNAVAILABLE;
  return decode(outcome.body, deserialize);
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
