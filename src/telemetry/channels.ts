import { channel } from 'node:diagnostics_channel';

/**
 * Telemetry is published here and subscribed to elsewhere (metrics, later
 * tracing and audit), so the request path never depends on who listens.
 * Publishers check `hasSubscribers` first, so an unobserved channel costs
 * nothing.
 */

export interface RequestEnd {
  /** Bounded label: a known MCP method, `other`, or the HTTP route kind. */
  readonly method: string;
  /** `forwarded`, `client_closed`, or a registry error code. */
  readonly outcome: string;
  readonly status: number;
  readonly durationSeconds: number;
}

export interface StreamChange {
  readonly delta: 1 | -1;
}

/** Published after every catalogue change. */
export interface CatalogueState {
  readonly tools: number;
  /** Tools whose inputSchema toolgate refuses to enforce (their calls get 503). */
  readonly unenforceable: number;
}

export const requestEnd = channel('toolgate:request:end');
export const catalogueState = channel('toolgate:catalogue:state');
export const sseStream = channel('toolgate:sse:stream');
export const inflight = channel('toolgate:request:inflight');
