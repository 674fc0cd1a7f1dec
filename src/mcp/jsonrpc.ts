import type { ServerResponse } from 'node:http';
import { errors, type CredentialProblem, type ErrorId, type Hint } from '../errors.ts';
import type { ValidationError } from '../validation/types.ts';

export type JsonRpcId = string | number | null;

/** Fields an agent can act on; closed keys, never prose or request content. */
export interface ErrorData {
  /** The next step, where this refusal's differs from its code's usual one (scopes that would help). */
  readonly hint?: Hint;
  readonly requiredScopes?: readonly string[];
  readonly retryAfterMs?: number;
  /** Whether a side-effecting call may have run (`unknown`) or certainly did not (`not_started`). */
  readonly outcome?: 'unknown' | 'not_started';
  /** Failing JSON pointers and keywords (`required` with the `missing` names, `additionalProperties` with a `count`). */
  readonly errors?: readonly ValidationError[];
  /** The quarantined tool, and the first 12 hex digits of a digest the operator approved for it (if any). */
  readonly tool?: string;
  readonly approvedDigest?: string;
  /** Why a grant refused a call (a row's condition did not allow it, or could not be evaluated), or why a token was refused. */
  readonly reason?: 'condition' | 'condition_error' | CredentialProblem;
  /** An approval this call waits for, and the approver page that decides it. */
  readonly approvalId?: string;
  readonly url?: string;
  /** The URL-mode elicitations of a -32042 URLElicitationRequiredError (MCP 2025-11-25). */
  readonly elicitations?: readonly UrlElicitation[];
  /** A guarded result's size (when known) and the bound it broke, in bytes. */
  readonly size?: number;
  readonly limit?: number;
  /** The lint rules a withheld result tripped. */
  readonly rules?: readonly string[];
  /** What the request must declare (MCP's MissingRequiredClientCapability data). */
  readonly requiredCapabilities?: Readonly<Record<string, unknown>>;
}

/** A URL-mode elicitation (MCP 2025-11-25 and 2026-07-28 `ElicitRequestURLParams`). */
export interface UrlElicitation {
  readonly mode: 'url';
  readonly elicitationId: string;
  readonly url: string;
  readonly message: string;
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

/**
 * Writes a refusal of the request at hand, in the form its door decided: the
 * policy path's tool results, or a plain JSON-RPC error. Layers below the
 * pipeline refuse through one, so an upstream failure reads like any other
 * refusal of the same call.
 */
export type Refuser = (refusal: Refusal) => void;

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

/** What a retryable 503 tells the client to wait when its caller names nothing longer. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/** A retryable 503 says when to come back even where its cause gave no time: the short pause of a store fault. */
export function withUnavailablePause(errorId: ErrorId, data: ErrorData | undefined): ErrorData | undefined {
  const e = errors[errorId];
  return e.status === 503 && e.retryable && data?.retryAfterMs === undefined
    ? { retryAfterMs: UNAVAILABLE_RETRY_AFTER_SECONDS * 1000, ...data }
    : data;
}

/**
 * Writes a toolgate error as the whole response. `headers` carries challenges
 * such as WWW-Authenticate or Retry-After; a retryable 503 always carries a
 * Retry-After (and `retryAfterMs`), so clients back off instead of hammering.
 */
export function sendError(
  res: ServerResponse,
  id: JsonRpcId,
  errorId: ErrorId,
  data?: ErrorData,
  headers?: Record<string, string>,
  status = errors[errorId].status,
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const e = errors[errorId];
  const pause = e.status === 503 && e.retryable && headers?.['retry-after'] === undefined;
  const body = errorBody(id, errorId, pause ? withUnavailablePause(errorId, data) : data);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...(pause && { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) }),
    ...headers,
  });
  res.end(body);
}
