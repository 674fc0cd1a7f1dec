import { Pool } from 'undici';
import type { Settings } from '../config/settings.ts';

/**
 * One keep-alive pool to the upstream for the life of the process. The
 * upstream is normally loopback in the same pod, so connections are cheap to
 * keep and expensive to churn.
 */
export function createUpstreamPool(settings: Settings): Pool {
  return new Pool(settings.upstream.origin, {
    connections: settings.upstreamConnections,
    pipelining: 1,
    connect: { timeout: settings.upstreamTimeoutMs },
    headersTimeout: settings.upstreamTimeoutMs,
    // Streams (SSE) may stay quiet for long stretches; a client disconnect,
    // not a body timer, ends them.
    bodyTimeout: 0,
  });
}
