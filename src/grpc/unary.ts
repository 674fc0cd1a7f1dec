import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import type { Principal } from '../auth/types.ts';
import type { ErrorId } from '../errors.ts';
import { log } from '../telemetry/log.ts';
import { callerOf } from './auth.ts';
import type { GrpcPolicyDeps } from './deps.ts';
import { holdsAdmin } from './deps.ts';
import { grpcError } from './status.ts';

export type Answer<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ErrorId };

export interface UnaryOptions {
  readonly deps: GrpcPolicyDeps;
  /** The scope the caller must hold, when the whole method is for admins. */
  readonly adminScope?: string;
}

/**
 * One authenticated unary method: the caller is verified from metadata
 * first, registry errors become gRPC statuses, and an unexpected exception is
 * logged by method name only and answered as internal_error.
 */
export function unary<Req, Res>(
  method: string,
  options: UnaryOptions,
  handle: (caller: Principal, request: Req) => Promise<Answer<Res>>,
): (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void {
  return (call, callback) => {
    (async (): Promise<Answer<Res>> => {
      const caller = await callerOf(options.deps.current().verifiers, call.metadata);
      if (caller === undefined) return { ok: false, error: 'unauthenticated' };
      if (options.adminScope !== undefined && !holdsAdmin(caller, options.adminScope))
        return { ok: false, error: 'admin_scope_required' };
      return handle(caller, call.request);
    })().then(
      (r) => (r.ok ? callback(null, r.value) : callback(grpcError(r.error))),
      () => {
        log.error('gRPC method failed', { method });
        callback(grpcError('internal_error'));
      },
    );
  };
}
