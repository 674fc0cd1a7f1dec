import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { collectProcessMetrics } from './process-metrics.ts';
import { FastCounter, FastHistogram } from './fast-metrics.ts';
import {
  catalogueState,
  clientConnection,
  connectionRefused,
  contractEvent,
  contractPinsLost,
  contractState,
  decision,
  inflight,
  requestEnd,
  sseStream,
  upstreamEnd,
  type CatalogueState,
  type ContractEvent,
  type ContractPinsLost,
  type ContractState,
  type Decision,
  type RequestEnd,
  type StreamChange,
  type UpstreamEnd,
} from './channels.ts';
import { discovery, type DiscoveryDone } from './channels.ts';
import { auditRecord, grantState, grantStoreHealth, policyReload, snapshotLookup, type AuditRecord, type GrantState, type GrantStoreHealth, type PolicyReload, type SnapshotLookup } from './channels.ts';
import { safeName } from './span-attributes.ts';
import { approvalEvent, on, type Subscription, breakerChange, deadlinePassed, heapTrim, idempotencyOutcome, rateLimitFallback, resultGuard, taskEvent, upstreamRetry } from './channels.ts';
import type { ApprovalEvent, BreakerChange, DeadlinePassed, HeapTrim, IdempotencyOutcome, ResultGuardEvent, TaskEvent, UpstreamRetry } from './channels.ts';
import { keywordLabels } from './keywords.ts';

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
  collectProcessMetrics(registry);

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
  const inflightGauge = new Gauge({
    name: 'toolgate_inflight_requests',
    help: 'Requests currently being handled, SSE streams included.',
    registers: [registry],
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

  const contractDrift = new Counter({
    name: 'toolgate_contract_drift_total',
    help: 'Tools seen with a contract digest no pin approves, by action (alert, or quarantine in enforce mode).',
    labelNames: ['action'] as const,
    registers: [registry],
  });
  const quarantinedTools = new Gauge({
    name: 'toolgate_contract_quarantined_tools',
    help: 'Tools quarantined now (contract drift, unpinned with unknownTools: quarantine, or a high lint finding with lint: enforce).',
    registers: [registry],
  });
  const pinsLost = new Counter({
    name: 'toolgate_contract_pins_lost_total',
    help: 'Contract pins this replica held that the pin store (Redis) no longer had, or had only in an older form: kept in force and written back. Any increase means the store lost data.',
    registers: [registry],
  });
  const lintFindings = new Counter({
    name: 'toolgate_contract_lint_findings_total',
    help: 'Description lint findings on newly seen tool contracts, by rule id and severity.',
    labelNames: ['rule', 'severity'] as const,
    registers: [registry],
  });

  const decisions = new FastCounter({
    name: 'toolgate_decisions_total',
    help: 'Policy decisions, by stage (authentication, grants, security_level, rate_limit, arguments, conditions, tools_list, …), outcome (allow or the refusal code), mode (enforce, or audit for a refusal only recorded in shadow mode) and rule (the grant row that decided: its name or JSON pointer; empty for other stages).',
    labelNames: ['stage', 'outcome', 'mode', 'rule'] as const,
    registers: [registry],
  });
  const decisionDuration = new FastHistogram({
    name: 'toolgate_decision_duration_seconds',
    help: 'Time one policy stage took to decide, by stage.',
    labelNames: ['stage'] as const,
    buckets: [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1],
    registers: [registry],
  });
  const validationFailures = new Counter({
    name: 'toolgate_validation_failures_total',
    help: 'Refused tools/call arguments, by failing JSON Schema keyword (each keyword once per refusal; unknown keywords as other).',
    labelNames: ['keyword'] as const,
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

  const discoveryDuration = new Histogram({
    name: 'toolgate_discovery_duration_seconds',
    help: 'Discovery searches (toolgate/discover and search_tools) that returned a page, from parsing to the rendered page.',
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  const discoveryResults = new Histogram({
    name: 'toolgate_discovery_results',
    help: 'Tools returned per discovery page.',
    buckets: [0, 1, 2, 4, 8, 16],
    registers: [registry],
  });

  const snapshots = new FastCounter({
    name: 'toolgate_grant_snapshot_lookups_total',
    help: 'Grant snapshot lookups, by result (hit or miss of the snapshot cache).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  let grantConfirmedAtMs: number | undefined;
  let grantsReported = false;
  const revision = new Gauge({
    name: 'toolgate_grant_revision',
    help: 'Control revision of the grants in force, as last confirmed by the shared grant store (0 while none reports).',
    registers: [registry],
  });
  new Gauge({
    name: 'toolgate_grant_revision_age_seconds',
    help: 'Seconds since the shared grant store last confirmed the revision, growing from that moment (also past the staleness bound and during outages); 0 with grants from the policy file, which are always current.',
    registers: [registry],
    collect() {
      if (grantsReported) this.set(grantConfirmedAtMs === undefined ? 0 : Math.max(0, (Date.now() - grantConfirmedAtMs) / 1000));
    },
  });
  const storeHealth = new Counter({
    name: 'toolgate_grant_store_transitions_total',
    help: 'Health transitions of the shared grant store, by the state entered: ok, unreachable, not_master (a replica answered), fault (the revision went backwards: data lost; calls fail closed).',
    labelNames: ['state'] as const,
    registers: [registry],
  });

  const reloads = new Counter({
    name: 'toolgate_policy_reloads_total',
    help: 'Policy reload attempts, by outcome: applied, rejected (invalid; the last good policy stays), unchanged.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const lastReloadOk = new Gauge({
    name: 'toolgate_policy_last_reload_successful',
    help: '1 when the last policy reload attempt was applied or unchanged (or none happened yet), 0 when it was rejected.',
    registers: [registry],
  });
  lastReloadOk.set(1);

  const auditEvents = new Counter({
    name: 'toolgate_audit_events_total',
    help: 'Audit events, by outcome: queued for writing, or dropped because the audit queue was full.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });

  // The request path's series are bound once per label set (see
  // fast-metrics.ts); these maps find the bound series by composite key.
  const counters = new Map<string, { inc(): void }>();
  const histograms = new Map<string, { observe(v: number): void }>();
  const onEnd = (e: RequestEnd) => {
    const key = `${e.method}\u0000${e.outcome}`;
    let counter = counters.get(key);
    if (counter === undefined) counters.set(key, (counter = requests.bind(e.method, e.outcome)));
    counter.inc();
    let histogram = histograms.get(e.method);
    if (histogram === undefined) histograms.set(e.method, (histogram = duration.bind(e.method)));
    histogram.observe(e.durationSeconds);
  };
  const decisionCounters = new Map<string, { inc(): void }>();
  const decisionHistograms = new Map<string, { observe(v: number): void }>();
  const onDecision = (d: Decision) => {
    const outcome = d.allowed ? 'allow' : (d.error ?? 'deny');
    const mode = d.mode ?? 'enforce';
    const rule = d.rule ?? '';
    const key = `${d.stage}\u0000${outcome}\u0000${mode}\u0000${rule}`;
    let counter = decisionCounters.get(key);
    if (counter === undefined) decisionCounters.set(key, (counter = decisions.bind(d.stage, outcome, mode, rule)));
    counter.inc();
    let histogram = decisionHistograms.get(d.stage);
    if (histogram === undefined) decisionHistograms.set(d.stage, (histogram = decisionDuration.bind(d.stage)));
    histogram.observe(d.durationSeconds);
    if (d.keywords !== undefined) for (const k of keywordLabels(d.keywords)) validationFailures.labels(k).inc();
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
  const onDiscovery = (d: DiscoveryDone) => {
    discoveryDuration.observe(d.durationSeconds);
    discoveryResults.observe(d.results);
  };
  const snapshotHit = snapshots.bind('hit');
  const snapshotMiss = snapshots.bind('miss');
  const onSnapshot = (m: SnapshotLookup) => {
    const r = m.result;
    if (r === 'hit') snapshotHit.inc();
    else if (r === 'miss') snapshotMiss.inc();
  };
  const onGrantState = (g: GrantState) => {
    if (g.revision !== undefined) revision.set(g.revision);
    grantConfirmedAtMs = g.confirmedAtMs;
    grantsReported = true;
  };
  const onStoreHealth = (m: GrantStoreHealth) => {
    const state = m.state;
    if (state === 'ok' || state === 'unreachable' || state === 'not_master' || state === 'fault') storeHealth.labels(state).inc();
  };
  const onReload = (m: PolicyReload) => {
    const o = m.outcome;
    if (o !== 'applied' && o !== 'rejected' && o !== 'unchanged') return;
    reloads.labels(o).inc();
    lastReloadOk.set(o === 'rejected' ? 0 : 1);
  };
  const onAudit = (m: AuditRecord) => {
    const o = m.outcome;
    if (o === 'queued' || o === 'dropped') auditEvents.labels(o).inc();
  };
  const onInflight = (m: StreamChange) => inflightGauge.inc(m.delta);
  const onSse = (m: StreamChange) => sseGauge.inc(m.delta);
  const onConnection = (m: StreamChange) => connectionsGauge.inc(m.delta);
  const onRefused = () => refusedConnections.inc();
  const onCatalogue = (c: CatalogueState) => {
    catalogueTools.set(c.tools);
    unenforceable.set(c.unenforceable);
  };
  // Rule ids and severities come from the lint's closed rule table.
  const onContractEvent = (e: ContractEvent) => {
    if (e.kind === 'drift') contractDrift.labels(e.action).inc();
    for (const f of e.findings ?? []) lintFindings.labels(f.rule, f.severity).inc();
  };
  const onContractState = (m: ContractState) => quarantinedTools.set(m.quarantined);
  const onPinsLost = (m: ContractPinsLost) => pinsLost.inc(m.count);
  const subscriptions = [
    on(catalogueState, onCatalogue),
    on(contractEvent, onContractEvent),
    on(contractState, onContractState),
    on(contractPinsLost, onPinsLost),
    on(requestEnd, onEnd),
    on(inflight, onInflight),
    on(sseStream, onSse),
    on(clientConnection, onConnection),
    on(connectionRefused, onRefused),
    on(decision, onDecision),
    on(upstreamEnd, onUpstreamEnd),
    on(discovery, onDiscovery),
    on(snapshotLookup, onSnapshot),
    on(grantState, onGrantState),
    on(grantStoreHealth, onStoreHealth),
    on(policyReload, onReload),
    on(auditRecord, onAudit),
    ...executionMetrics(registry),
    ...heapTrimMetrics(registry),
  ];
  for (const s of subscriptions) s.subscribe();
  return {
    registry,
    dispose() {
      for (const s of subscriptions) s.unsubscribe();
    },
  };
}

const HTTP_METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'DELETE', 'HEAD', 'OPTIONS', 'PUT', 'PATCH']);

function httpMethodLabel(method: string | undefined): string {
  return method !== undefined && HTTP_METHODS.has(method) ? method : 'other';
}

/** How side-effecting calls ran: retries, the retry budget, the breaker, deadlines, idempotency keys, rate-limit fallback. */
function executionMetrics(registry: Registry): Subscription[] {
  const retries = new Counter({
    name: 'toolgate_upstream_retries_total',
    help: 'Transient upstream failures before any byte reached the client, by reason (connect, status_502/503/504/429) and outcome: retried, or answered because the retry budget was spent.',
    labelNames: ['reason', 'outcome'] as const,
    registers: [registry],
  });
  const breaker = new Gauge({
    name: 'toolgate_upstream_breaker_state',
    help: "The upstream circuit breaker's state: 0 closed, 1 half-open (one probe allowed), 2 open (calls refused at once).",
    registers: [registry],
  });
  const deadlines = new Counter({
    name: 'toolgate_deadline_exceeded_total',
    help: 'tools/call deadlines that passed, by phase: before_forward (never sent) or in_flight (upstream exchange aborted).',
    labelNames: ['phase'] as const,
    registers: [registry],
  });
  const keys = new Counter({
    name: 'toolgate_idempotency_total',
    help: 'Keyed tools/call outcomes: executed, replayed (stored result), in_progress (409), unknown (409 outcome_unknown), reused (422), not_stored (result too large to replay).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const fallback = new Counter({
    name: 'toolgate_rate_limit_fallback_total',
    help: 'Rate-limit decisions made per process because the shared Redis limiter could not be asked.',
    registers: [registry],
  });
  const approvals = new Counter({
    name: 'toolgate_approvals_total',
    help: 'Approval steps, by event: requested, approved, denied, expired (a repeat came too late), spent (the approved call ran), unsettled (a repeat found a spend Redis never confirmed).',
    labelNames: ['event'] as const,
    registers: [registry],
  });
  const tasks = new Counter({
    name: 'toolgate_tasks_total',
    help: 'Task bindings, by event: bound (a call created a task), unbound (its record could not be written), taken (the id was another principal\'s); and tasks/* requests: owner, not_found (not the creator, or unknown), unavailable (store unreachable), revoked (the creator lost the tool).',
    labelNames: ['event'] as const,
    registers: [registry],
  });
  const guarded = new Counter({
    name: 'toolgate_result_guard_total',
    help: 'Result guard actions on tools/call results, by tool, detector (a detector id, a lint rule id, max_bytes or output_schema) and action: redact, mark, block, cut (too large); would_* under enforcement audit. Counts matches, never content.',
    labelNames: ['tool', 'detector', 'action'] as const,
    registers: [registry],
  });
  const BREAKER = { closed: 0, half_open: 1, open: 2 } as const;
  return [
    on(upstreamRetry, (m: UpstreamRetry) => retries.labels(m.reason, m.outcome).inc()),
    on(breakerChange, (m: BreakerChange) => breaker.set(BREAKER[m.state])),
    on(deadlinePassed, (m: DeadlinePassed) => deadlines.labels(m.phase).inc()),
    on(idempotencyOutcome, (m: IdempotencyOutcome) => keys.labels(m.result).inc()),
    on(rateLimitFallback, () => fallback.inc()),
    on(approvalEvent, (m: ApprovalEvent) => approvals.labels(m.event).inc()),
    on(taskEvent, (m: TaskEvent) => tasks.labels(m.event).inc()),
    on(resultGuard, (g: ResultGuardEvent) => {
      for (const h of g.hits) guarded.labels(safeName(g.tool) ?? 'invalid', h.detector, g.mode === 'audit' ? `would_${h.action}` : h.action).inc(h.count);
    }),
  ];
}

/** The idle heap trim (telemetry/heap-trim.ts): how often it ran and what it gave back. */
function heapTrimMetrics(registry: Registry): Subscription[] {
  const trims = new Counter({
    name: 'toolgate_heap_trims_total',
    help: 'Idle heap trims: memory-reducing collections run once the process fell idle after activity (TOOLGATE_HEAP_TRIM_IDLE_MS).',
    registers: [registry],
  });
  const trimmed = new Counter({
    name: 'toolgate_heap_trim_released_bytes_total',
    help: 'Heap memory the idle heap trims gave back to the system.',
    registers: [registry],
  });
  return [on(heapTrim, (m: HeapTrim) => {
    trims.inc();
    trimmed.inc(m.releasedBytes);
  })];
}
