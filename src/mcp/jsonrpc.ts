import type { ServerResponse } from 'node:http';
import { errors, type ErrorId } from '../errors.ts';

export type JsonRpcId = string | number | null;

/** Fields an agent can act on; closed keys, never prose or request content. */
export interface ErrorData {
  readonly requiredScopes?: readonly string[];
  readonly retryAfterMs?: number;
  /** Whether a side-effecting call may have run (`unknown`) or certainly did not (`not_started`). */
  readonly outcome?: 'unknown' | 'not_started';
  readonly errors?: readonly { readonly instancePath: string; readonly keyword: string }[];
}

/**
 * A refusal as the wire carries it: the registry error, the machine data an
 * agent acts on, and any challenge headers (WWW-Authenticate, Retry-After).
 */
export interface Refusal {
  readonly error: ErrorId;
  readonly data?: ErrorData;
  readonly headers?: Readonly<Record<string, string>>;
}

export function errorBody(id: JsonRpcId, errorId: ErrorId, data?: ErrorData): string {
  const e = errors[errorId];
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: {
      code: e.rpcCode,
      message: e.message,
      data: { code: e.code, retryable: e.retryable, hint: e.hint, ...data },
    },
  });
}

/**
 * Writes a toolgate error as the whole response. `headers` carries challenges
 * such as WWW-Authenticate or Retry-After.
 */
export function sendError(
  res: ServerResponse,
  id: JsonRpcId,
  errorId: ErrorId,
  data?: ErrorData,
  headers?: Record<string, string>,
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = errorBody(id, errorId, data);
  res.writeHead(errors[errorId].status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}
