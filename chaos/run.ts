/**
 * `npm run chaos`: real Redis (standalone, Sentinel, Cluster), real toolgate
 * processes and a counting MCP upstream; faults injected under load. Prints
 * one JSON line per scenario with its details, then the summary line last.
 * Bounded: each scenario takes well under a minute, the whole run well under
 * ten; a scenario that overruns its bound fails the run.
 */
import { continueBeforeAuth, rateLimitStall } from './edges.ts';
import { failoverWithLaggingReplica, idempotencyEmptyRestart, pinsAfterLoss } from './state.ts';
import {
  clusterSlotDown,
  COMMAND_TIMEOUT_MS,
  createFixture,
  dataLoss,
  sentinelFailover,
  STALENESS_MS,
  UPSTREAM_TIMEOUT_MS,
  type Outcome,
} from './scenarios.ts';

const SCENARIO_BOUND_MS = 120_000;
/**
 * The per-tool default that used to replace TOOLGATE_UPSTREAM_TIMEOUT_MS. A
 * 504 well before it shows the setting in force; the exact figure is printed
 * too, since on a loaded machine it carries the machine's own stalls.
 */
const OLD_TOOL_DEFAULT_MS = 30_000;

function bounded<T>(name: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`scenario ${name} overran ${SCENARIO_BOUND_MS} ms`)), SCENARIO_BOUND_MS);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function counts(o: Outcome): Record<string, number> {
  const byAnswer: Record<string, number> = {};
  for (const s of o.samples) {
    const key = `${s.status}${s.code === undefined ? '' : ` ${s.code}`}`;
    byAnswer[key] = (byAnswer[key] ?? 0) + 1;
  }
  return byAnswer;
}

const began = Date.now();
const fixture = await createFixture();
try {
  const graceful = await bounded('sentinel_graceful', sentinelFailover(fixture, false));
  const hard = await bounded('sentinel_hard', sentinelFailover(fixture, true));
  const loss = await bounded('data_loss', dataLoss(fixture));
  const cluster = await bounded('cluster_slot_down', clusterSlotDown(fixture));
  const lagging = await bounded('sentinel_lagging_replica', failoverWithLaggingReplica());
  const emptied = await bounded('idempotency_empty_restart', idempotencyEmptyRestart());
  const pins = await bounded('pins_after_loss', pinsAfterLoss());
  const limits = await bounded('ratelimit_stall', rateLimitStall());
  const continued = await bounded('continue_before_auth', continueBeforeAuth());
  const all: [string, Outcome][] = [
    ['sentinel_graceful', graceful],
    ['sentinel_hard', hard],
    ['data_loss', loss],
    ['cluster_slot_down', cluster],
  ];
  for (const [name, o] of all) {
    const { samples: _samples, problems, ...rest } = o as Outcome & Record<string, unknown>;
    process.stdout.write(
      `${JSON.stringify({ scenario: name, requests: o.samples.length, answers: counts(o), ...rest, logProblems: problems.length })}\n`,
    );
  }
  for (const [name, r] of Object.entries({
    sentinel_lagging_replica: lagging,
    idempotency_empty_restart: emptied,
    pins_after_loss: pins,
    ratelimit_stall: limits,
    continue_before_auth: continued,
  })) {
    process.stdout.write(`${JSON.stringify({ scenario: name, ...r })}\n`);
  }
  process.stdout.write(
    `${JSON.stringify({
      sentinel_failover_stale_allow_ms: Math.max(graceful.staleAllowMs, hard.staleAllowMs),
      sentinel_failover_allowed_after_deny: graceful.allowedAfterDeny + hard.allowedAfterDeny,
      one_time_replays: all.reduce((n, [, o]) => n + o.replays, 0),
      data_loss_403: loss.notGranted,
      data_loss_recovered: loss.recovered,
      cluster_block_ms: cluster.blockMs,
      cluster_max_gap_ms: cluster.maxGapMs,
      cluster_baseline_max_ms: cluster.baselineMaxMs,
      cluster_gate_event_loop_lag_max_ms: cluster.gateEventLoopLagMaxMs,
      upstream_timeout_honoured: loss.upstreamTimeoutMs > 0 && loss.upstreamTimeoutMs < OLD_TOOL_DEFAULT_MS / 3,
      upstream_timeout_ms: loss.upstreamTimeoutMs,
      upstream_timeout_setting_ms: UPSTREAM_TIMEOUT_MS,
      hangs: all.reduce((n, [, o]) => n + o.samples.filter((s) => s.hung).length, 0),
      crashes: all.filter(([, o]) => o.crashed).length + [lagging, pins].filter((r) => r.crashed).length,
      approval_double_spends: lagging.approvalDoubleSpends,
      approvals_burnt: lagging.approvalsBurnt,
      approvals_unsettled: lagging.approvalsUnsettled,
      idempotent_double_executions:
        lagging.idempotentDoubleExecutions + emptied.inFlightDoubleExecutions + emptied.afterCompletionDoubleExecutions,
      pin_trust_after_loss: pins.trusted,
      ratelimit_stall_overshoot: limits.overshoot,
      ratelimit_stall_slowest_ms: limits.slowestDuringStallMs,
      continue_before_auth: continued.continuedBeforeAuth,
      staleness_ms: STALENESS_MS,
      command_timeout_ms: COMMAND_TIMEOUT_MS,
      duration_s: Math.round((Date.now() - began) / 1000),
    })}\n`,
  );
} finally {
  await fixture.close();
}
