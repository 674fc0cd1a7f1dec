import { Counter, Gauge, type Registry } from '../prom.ts';
import {
  clientConnection,
  connectionRefused,
  inflight,
  on,
  requestEnd,
  sseStream,
  upstreamEnd,
  type RequestEnd,
  type StreamChange,
  type Subscription,
  type UpstreamEnd,
} from '../channels.ts';
import { FastCounter, FastHistogram } from '../fast-metrics.ts';

/** Requests on the traffic port and their upstream exchanges: counts by method and outcome, durations, what is in flight. */
export function trafficMetrics(registry: Registry): Subscription[] {
  const requests = new FastCounter({
    name: 'toolgate_requests_total',
    help: 'MCP endpoint and pass-through requests, by MCP method and outcome.',
    labelNames: ['method', 'outcome'] as const,
    registers: [registry],
  });

  const duration = new FastHistogram({
    name: 'toolgate_request_duration_seconds',
    help: 'Time from request arrival to the end of the response, by MCP method.',
    labelNames: ['method'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });

  // Counted here and read at scrape time: every request moves it twice, and prom-client's inc() hashes a label set each time.
  let inflightNow = 0;
  // oxlint-disable-next-line no-new -- the gauge registers itself and is read through its collect()
  new Gauge({
    name: 'toolgate_inflight_requests',
    help: 'Requests currently being handled, SSE streams included.',
    registers: [registry],
    collect() {
      this.set(inflightNow);
    },
  });

  const connectionsGauge = new Gauge({
    name: 'toolgate_client_connections',
    help: 'Client connections open on the traffic port.',
    registers: [registry],
  });

  const refusedConnections = new Counter({
    name: 'toolgate_client_connections_refused_total',
    help: 'Client connections closed on arrival because TOOLGATE_MAX_CONNECTIONS were already open.',
    registers: [registry],
  });

  const sseGauge = new Gauge({
    name: 'toolgate_sse_streams_open',
    help: 'Server-sent event streams currently open through toolgate.',
    registers: [registry],
  });

  const upstreamDuration = new FastHistogram({
    name: 'toolgate_upstream_duration_seconds',
    help: 'Upstream exchanges from sending the request to the end of the response, by HTTP method (GET is mostly long-lived SSE streams).',
    labelNames: ['http_method'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });

  const upstreamErrors = new Counter({
    name: 'toolgate_upstream_errors_total',
    help: 'Upstream exchanges that failed, by code: upstream_unavailable (refused or reset), upstream_timeout, payload_too_large, client_closed, or status_5xx for a 5xx answer.',
    labelNames: ['code'] as const,
    registers: [registry],
  });

  // The request path's series are bound once per label set (see
  // fast-metrics.ts) and found by method, then outcome: no composite key per request.
  const byMethod = new Map<
    string,
    { readonly duration: { observe(v: number): void }; readonly outcomes: Map<string, { inc(): void }> }
  >();
  const onEnd = (e: RequestEnd) => {
    let series = byMethod.get(e.method);
    if (series === undefined)
      byMethod.set(e.method, (series = { duration: duration.bind(e.method), outcomes: new Map() }));
    let counter = series.outcomes.get(e.outcome);
    if (counter === undefined) series.outcomes.set(e.outcome, (counter = requests.bind(e.method, e.outcome)));
    counter.inc();
    series.duration.observe(e.durationSeconds);
  };

  const upstreamHistograms = new Map<string, { observe(v: number): void }>();
  const onUpstreamEnd = (u: UpstreamEnd) => {
    const method = httpMethodLabel(u.request.method);
    let histogram = upstreamHistograms.get(method);
    if (histogram === undefined) upstreamHistograms.set(method, (histogram = upstreamDuration.bind(method)));
    histogram.observe(u.durationSeconds);
    if (u.error !== undefined) upstreamErrors.labels(u.error).inc();
    else if (u.status >= 500) upstreamErrors.labels('status_5xx').inc();
  };
  return [
    on(requestEnd, onEnd),
    on(inflight, (m: StreamChange) => void (inflightNow += m.delta)),
    on(sseStream, (m: StreamChange) => sseGauge.inc(m.delta)),
    on(clientConnection, (m: StreamChange) => connectionsGauge.inc(m.delta)),
    on(connectionRefused, () => refusedConnections.inc()),
    on(upstreamEnd, onUpstreamEnd),
  ];
}

const HTTP_METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'DELETE', 'HEAD', 'OPTIONS', 'PUT', 'PATCH']);

function httpMethodLabel(method: string | undefined): string {
  return method !== undefined && HTTP_METHODS.has(method) ? method : 'other';
}
