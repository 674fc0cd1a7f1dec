import { Counter, Gauge, type Registry } from '../prom.ts';
import {
  approvalEvent,
  breakerChange,
  deadlinePassed,
  idempotencyOutcome,
  on,
  rateLimitFallback,
  resultGuard,
  taskEvent,
  upstreamRetry,
  type ApprovalEvent,
  type BreakerChange,
  type DeadlinePassed,
  type IdempotencyOutcome,
  type ResultGuardEvent,
  type Subscription,
  type TaskEvent,
  type UpstreamRetry,
} from '../channels.ts';
import { safeName } from '../span-attributes.ts';

/** How side-effecting calls ran: retries, the retry budget, the breaker, deadlines, idempotency keys, rate-limit fallback. */
export function executionMetrics(registry: Registry): Subscription[] {
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
    help: "Task bindings, by event: bound (a call created a task), unbound (its record could not be written), taken (the id was another principal's); and tasks/* requests: owner, not_found (not the creator, or unknown), unavailable (store unreachable), revoked (the creator lost the tool).",
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
      for (const h of g.hits)
        guarded
          .labels(safeName(g.tool) ?? 'invalid', h.detector, g.mode === 'audit' ? `would_${h.action}` : h.action)
          .inc(h.count);
    }),
  ];
}
