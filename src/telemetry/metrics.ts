import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { catalogueState, inflight, requestEnd, sseStream, type CatalogueState, type RequestEnd, type StreamChange } from './channels.ts';

/**
 * Every metric toolgate exports is defined in this file, with labels drawn
 * from closed sets so cardinality stays bounded. The README metrics table
 * lists the same names.
 */
export interface Metrics {
  readonly registry: Registry;
  /** Unsubscribes from the telemetry channels. */
  dispose(): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'toolgate_process_' });

  const requests = new Counter({
    name: 'toolgate_requests_total',
    help: 'MCP endpoint and pass-through requests, by MCP method and outcome.',
    labelNames: ['method', 'outcome'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'toolgate_request_duration_seconds',
    help: 'Time from request arrival to the end of the response, by MCP method.',
    labelNames: ['method'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const inflightGauge = new Gauge({
    name: 'toolgate_inflight_requests',
    help: 'Requests currently being handled, SSE streams included.',
    registers: [registry],
  });
  const sseGauge = new Gauge({
    name: 'toolgate_sse_streams_open',
    help: 'Server-sent event streams currently open through toolgate.',
    registers: [registry],
  });

  const catalogueTools = new Gauge({
    name: 'toolgate_catalogue_tools',
    help: "Tools in toolgate's copy of the upstream catalogue.",
    registers: [registry],
  });
  const unenforceable = new Gauge({
    name: 'toolgate_catalogue_unenforceable_tools',
    help: 'Catalogue tools whose inputSchema toolgate cannot enforce; calls to them are refused.',
    registers: [registry],
  });

  // Label children are resolved once per label set: prom-client hashes the
  // label values on every labels() call, which is measurable per request.
  const counters = new Map<string, { inc(): void }>();
  const histograms = new Map<string, { observe(v: number): void }>();
  const onEnd = (m: unknown) => {
    const e = m as RequestEnd;
    const key = `${e.method}\u0000${e.outcome}`;
    let counter = counters.get(key);
    if (counter === undefined) counters.set(key, (counter = requests.labels(e.method, e.outcome)));
    counter.inc();
    let histogram = histograms.get(e.method);
    if (histogram === undefined) histograms.set(e.method, (histogram = duration.labels(e.method)));
    histogram.observe(e.durationSeconds);
  };
  const onInflight = (m: unknown) => inflightGauge.inc((m as StreamChange).delta);
  const onSse = (m: unknown) => sseGauge.inc((m as StreamChange).delta);
  const onCatalogue = (m: unknown) => {
    const c = m as CatalogueState;
    catalogueTools.set(c.tools);
    unenforceable.set(c.unenforceable);
  };
  catalogueState.subscribe(onCatalogue);
  requestEnd.subscribe(onEnd);
  inflight.subscribe(onInflight);
  sseStream.subscribe(onSse);
  return {
    registry,
    dispose() {
      requestEnd.unsubscribe(onEnd);
      inflight.unsubscribe(onInflight);
      sseStream.unsubscribe(onSse);
      catalogueState.unsubscribe(onCatalogue);
    },
  };
}
