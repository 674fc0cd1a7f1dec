/**
 * Calls one external validator's `Validate` and reduces the answer to a
 * closed outcome. Anything other than a well-formed answer within the
 * deadline (a timeout, a refused connection, a crash, a message that does
 * not decode, `valid: false` without a severity) is a failure, which the
 * interceptor turns into a refusal unless the validator fails open. The
 * validator's free-text message is never read.
 */
import { credentials, status, type Client, type ServiceError } from '@grpc/grpc-js';
import { serviceClient } from './definitions.ts';
import type { ValidateRequest } from './generated/toolgate/v1/ValidateRequest.ts';
import type { ValidateResponse__Output } from './generated/toolgate/v1/ValidateResponse.ts';
import type { ValidatorCaller, ValidatorOutcome } from '../interceptors/external-validator.ts';

/** Largest answer a validator may send; anything larger is malformed. */
const MAX_ANSWER_BYTES = 64 * 1024;
const CODE = /^[a-z0-9_]{1,64}$/;
const SEVERITIES = { SEVERITY_INFO: 'info', SEVERITY_WARNING: 'warning', SEVERITY_ERROR: 'error' } as const;

type ValidateFn = (
  request: ValidateRequest,
  options: { deadline: Date },
  callback: (err: ServiceError | null, value?: ValidateResponse__Output) => void,
) => unknown;

/** One channel per target, shared by every validator entry and policy version naming it. */
export class ValidatorClients implements ValidatorCaller {
  readonly #clients = new Map<string, Client>();

  validate(target: string, request: ValidateRequest, timeoutMs: number): Promise<ValidatorOutcome> {
    const client = this.#client(target);
    return new Promise((resolve) => {
      const call = (client as unknown as { Validate: ValidateFn }).Validate.bind(client);
      call(request, { deadline: new Date(Date.now() + timeoutMs) }, (err, value) => {
        if (err !== null) resolve({ kind: 'failed', reason: err.code === status.DEADLINE_EXCEEDED ? 'timeout' : err.code === status.INTERNAL ? 'malformed' : 'unavailable' });
        else resolve(interpret(value));
      });
    });
  }

  /** Starts connecting to `target` now, so the first call does not spend its deadline on the handshake. */
  connect(target: string): void {
    this.#client(target).getChannel().getConnectivityState(true);
  }

  close(): void {
    for (const c of this.#clients.values()) c.close();
    this.#clients.clear();
  }

  #client(target: string): Client {
    let c = this.#clients.get(target);
    if (c === undefined) {
      const Ctor = serviceClient('toolgate.v1.Validator');
      c = new Ctor(target, credentials.createInsecure(), {
        'grpc.max_receive_message_length': MAX_ANSWER_BYTES,
        // A validator that restarts should be asked again promptly, not after a long backoff.
        'grpc.initial_reconnect_backoff_ms': 100,
        'grpc.max_reconnect_backoff_ms': 1000,
        // Per-call work toolgate does not use: grpc-js would keep every
        // message for a retry it must never make (the deadline is the
        // interceptor's whole budget), and count every call for channelz.
        'grpc.enable_retries': 0,
        'grpc.enable_channelz': 0,
      });
      this.#clients.set(target, c);
    }
    return c;
  }
}

export function interpret(value: ValidateResponse__Output | undefined): ValidatorOutcome {
  if (value === undefined || typeof value.valid !== 'boolean') return { kind: 'failed', reason: 'malformed' };
  if (value.valid) return { kind: 'valid' };
  const severity = SEVERITIES[value.severity as keyof typeof SEVERITIES];
  if (severity === undefined) return { kind: 'failed', reason: 'malformed' };
  return { kind: 'invalid', severity, code: typeof value.code === 'string' && CODE.test(value.code) ? value.code : undefined };
}
