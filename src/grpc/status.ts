/**
 * gRPC status codes for the error registry. The status message is the
 * registry message (never request content or exception text); the registry
 * code, hint and retryability travel as trailing metadata
 * (`toolgate-code`, `toolgate-hint`, `toolgate-retryable`) so clients branch
 * on closed values. The table is in docs/grpc.md.
 */
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { errors, type ErrorId } from '../errors.ts';

const BY_CODE: Partial<Record<ErrorId, status>> = {
  method_not_found: status.UNIMPLEMENTED,
  method_not_allowed: status.UNIMPLEMENTED,
  grants_read_only: status.FAILED_PRECONDITION,
  tool_validation_unavailable: status.FAILED_PRECONDITION,
  tool_schema_too_large: status.FAILED_PRECONDITION,
  upstream_timeout: status.DEADLINE_EXCEEDED,
  // The same refusal as approval_required, in the form MCP 2025-11-25 clients read (HTTP 200 there).
  approval_url_elicitation: status.PERMISSION_DENIED,
  // A JSON-RPC error at HTTP 200 on MCP, as servers answer an unknown task id.
  task_not_found: status.NOT_FOUND,
};

const BY_HTTP: Readonly<Record<number, status>> = {
  400: status.INVALID_ARGUMENT,
  401: status.UNAUTHENTICATED,
  403: status.PERMISSION_DENIED,
  404: status.NOT_FOUND,
  408: status.DEADLINE_EXCEEDED,
  409: status.ABORTED,
  413: status.RESOURCE_EXHAUSTED,
  422: status.FAILED_PRECONDITION,
  429: status.RESOURCE_EXHAUSTED,
  431: status.RESOURCE_EXHAUSTED,
  500: status.INTERNAL,
  502: status.UNAVAILABLE,
  503: status.UNAVAILABLE,
  504: status.DEADLINE_EXCEEDED,
};

export function grpcStatusOf(id: ErrorId): status {
  return BY_CODE[id] ?? BY_HTTP[errors[id].status] ?? status.UNKNOWN;
}

/** A ServiceError for a registry error, ready to hand to a callback or `emit('error')`. */
export function grpcError(id: ErrorId): Partial<ServiceError> {
  const e = errors[id];
  const metadata = new Metadata();
  metadata.set('toolgate-code', e.code);
  metadata.set('toolgate-hint', e.hint);
  metadata.set('toolgate-retryable', String(e.retryable));
  return { code: grpcStatusOf(id), details: e.message, metadata };
}
