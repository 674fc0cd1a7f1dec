import { channel } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';

/** One discovery search: counts and latency, never the query text. */
export interface DiscoveryDone {
  readonly request: IncomingMessage;
  readonly results: number;
  /** Matching tools the caller may call (never counts other tools). */
  readonly total: number;
  readonly durationSeconds: number;
}

export const discovery = channel('toolgate:discovery');
