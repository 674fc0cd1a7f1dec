import { createRequire } from 'node:module';
import type { Pool as UndiciPool } from 'undici';
import type { Settings } from '../config/settings.ts';

/**
 * undici's Pool without the rest of undici. The package index loads every
 * dispatcher, fetch, WebSocket, the mock agents and the caches (110 modules,
 * about 70 ms of CPU at start-up and 12 MB resident) for the one class
 * toolgate forwards with. For a Pool the index does one thing besides: it
 * mixes the request/stream API into the Dispatcher prototype, which is done
 * here the same way. undici has no exports map, so these paths are reachable
 * by design; test/unit/upstream/pool.test.ts holds them to the index's Pool.
 */
const require = createRequire(import.meta.url);
const Pool = require('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
Object.assign(
  (require('undici/lib/dispatcher/dispatcher.js') as { prototype: object }).prototype,
  require('undici/lib/api/index.js'),
);

/**
 * The keep-alive pool to the upstream, carrying how long a response body may
 * stay silent. The upstream is normally loopback in the same pod, so
 * connections are cheap to keep and expensive to churn.
 */
export class UpstreamPool extends Pool {
  /** Longest silence between body chunks of a response that is not an event stream (0: none). */
  readonly bodyIdleMs: number;

  constructor(origin: URL, options: UndiciPool.Options, idleMs: number) {
    super(origin.origin, options);
    this.bodyIdleMs = idleMs;
  }
}

/** One pool for the life of the process. */
export function createUpstreamPool(
  settings: Pick<Settings, 'upstream' | 'upstreamBodyIdleMs' | 'upstreamConnections' | 'upstreamTimeoutMs'>,
): UpstreamPool {
  return new UpstreamPool(
    settings.upstream,
    {
      connections: settings.upstreamConnections,
      pipelining: 1,
      connect: { timeout: settings.upstreamTimeoutMs },
      headersTimeout: settings.upstreamTimeoutMs,
      // Streams (SSE) may stay quiet for long stretches, so undici keeps no
      // body timer; forward() bounds the silence of every other response.
      bodyTimeout: 0,
    },
    settings.upstreamBodyIdleMs,
  );
}

/** The body bound of a pool, when it is toolgate's own. */
export function bodyIdleMs(pool: UndiciPool): number {
  return pool instanceof UpstreamPool ? pool.bodyIdleMs : 0;
}
