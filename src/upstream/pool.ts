import { Pool } from 'undici';
import type { Settings } from '../config/settings.ts';

/**
 * The keep-alive pool to the upstream, carrying how long a response body may
 * stay silent. The upstream is normally loopback in the same pod, so
 * connections are cheap to keep and expensive to churn.
 */
export class UpstreamPool extends Pool {
  /** Longest silence between body chunks of a response that is not an event stream (0: none). */
  readonly bodyIdleMs: number;

  constructor(origin: URL, options: Pool.Options, bodyIdleMs: number) {
    super(origin.origin, options);
    this.bodyIdleMs = bodyIdleMs;
  }
}

/** One pool for the life of the process. */
export function createUpstreamPool(settings: Settings): UpstreamPool {
  return new UpstreamPool(settings.upstream, {
    connections: settings.upstreamConnections,
    pipelining: 1,
    connect: { timeout: settings.upstreamTimeoutMs },
    headersTimeout: settings.upstreamTimeoutMs,
    // Streams (SSE) may stay quiet for long stretches, so undici keeps no
    // body timer; forward() bounds the silence of every other response.
    bodyTimeout: 0,
  }, settings.upstreamBodyIdleMs);
}

/** The body bound of a pool, when it is toolgate's own. */
export function bodyIdleMs(pool: Pool): number {
  return pool instanceof UpstreamPool ? pool.bodyIdleMs : 0;
}
