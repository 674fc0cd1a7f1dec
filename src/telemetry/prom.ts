import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

/**
 * prom-client's metric classes without the package index. The index also
 * loads the Pushgateway, and with it node:https, node:tls and node:zlib, which
 * toolgate never uses: about 6 ms of every start (ready 201 against 207 ms,
 * median of 15 interleaved starts). prom-client has no exports map, so these
 * paths are reachable by design, as undici's are in upstream/pool.ts;
 * test/unit/telemetry/prom.test.ts holds them to the index's classes.
 */
const require = createRequire(import.meta.url);

export const Registry = require('prom-client/lib/registry.js') as typeof PromClient.Registry;
export type Registry = PromClient.Registry;
export const Counter = require('prom-client/lib/counter.js') as typeof PromClient.Counter;
export const Gauge = require('prom-client/lib/gauge.js') as typeof PromClient.Gauge;
export const Histogram = require('prom-client/lib/histogram.js') as typeof PromClient.Histogram;
export const collectDefaultMetrics =
  require('prom-client/lib/defaultMetrics.js') as typeof PromClient.collectDefaultMetrics;
