import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExponentialBackoff, fullJitterGenerator, type IBackoff } from 'cockatiel';
import type { Pool } from 'undici';
import type { JsonRpcId, Refuser } from '../mcp/jsonrpc.ts';
import { upstreamRetry } from '../telemetry/channels.ts';
import { attempt, type AnswerGuard, type AnswerHold, type AttemptOutcome, type AttemptRecord, type ForwardOutcome, type ResponseHeadHook, type Transient } from '../upstream/forward.ts';
import type { UpstreamBreaker } from './breaker.ts';
import type { Deadline } from './deadline.ts';
import type { RetryBudget } from './retry-budget.ts';

/** The per-upstream machinery every call shares. */
export interface Upstream {
  readonly pool: Pool;
  readonly breaker: UpstreamBreaker;
  readonly budget: RetryBudget;
  readonly backoffMs: number;
}

/** How one call may run. */
export interface CallPlan {
  readonly deadline: Deadline;
  /** Retries allowed: the tool's maxRetries where a repeat is safe, else 0. */
  readonly retries: number;
  readonly resetOnProgress: boolean;
  /** error.data.outcome when the deadline passes mid-call (`unknown` for a tool that may change state). */
  readonly outcomeOnDeadline: 'unknown' | undefined;
  /** The deadline is the tool's own timeout, not the caller's shorter budget: its passing counts against the upstream. */
  readonly deadlineIsTools: boolean;
}

export interface CallIo {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly headers: string[];
  readonly body: Buffer;
  readonly rpcId: JsonRpcId;
  /** Writes toolgate's refusals of this call (deadline, breaker, upstream failure). */
  readonly refuse: Refuser;
  readonly onResponseHead?: ResponseHeadHook | undefined;
  readonly onResponseChunk?: ((chunk: Buffer) => void) | undefined;
  /** Holds the answer until what it created is recorded (a task's creator). */
  readonly holdAnswer?: AnswerHold | undefined;
  /** The result guard of this call's tool, when its policy has a `results` section. */
  readonly guardAnswer?: AnswerGuard | undefined;
}


/** Longest backoff between two attempts; the deadline usually cuts it shorter. */
const MAX_BACKOFF_MS = 2000;
const FAILING_STATUSES = new Set([502, 503, 504]);

/**
 * Runs one tools/call upstream: under the call's deadline, behind the
 * breaker, retried only on transient failures before any byte reached the
 * client, with full-jitter exponential backoff (cockatiel), never past the
 * deadline, and only while the retry budget allows. Each attempt is its own
 * upstream exchange (and span). `record` tells the caller whether the last
 * attempt's request can have reached the upstream.
 */
export async function runCall(upstream: Upstream, plan: CallPlan, io: CallIo, record: AttemptRecord): Promise<ForwardOutcome> {
  upstream.budget.request();
  let backoff: IBackoff<unknown> | undefined;
  let waitMs = 0;
  for (let n = 0; ; n++) {
    let retrying: Transient | undefined;
    const onTransient = n >= plan.retries ? undefined : (t: Transient): boolean => {
      backoff = (backoff ?? new ExponentialBackoff({ generator: fullJitterGenerator, initialDelay: upstream.backoffMs, maxDelay: MAX_BACKOFF_MS })).next(undefined);
      waitMs = t.retryAfterMs ?? backoff.duration;
      // A retry that could not finish before the deadline is not made; neither is one past the budget.
      if (waitMs >= plan.deadline.remainingMs()) return false;
      if (!upstream.budget.tryRetry()) {
        if (upstreamRetry.hasSubscribers) upstreamRetry.publish({ outcome: 'budget_exhausted', reason: t.reason });
        return false;
      }
      retrying = t;
      return true;
    };
    if (plan.deadline.passed()) {
      io.refuse({ error: 'deadline_exceeded', ...(plan.outcomeOnDeadline !== undefined && { data: { outcome: plan.outcomeOnDeadline } }) });
      return 'deadline_exceeded';
    }
    record.status = 0;
    record.refused = false;
    const guarded = await upstream.breaker.run(
      () => attempt(upstream.pool, io.req, io.res, io.headers, io.body, io.rpcId, {
        deadline: { remainingMs: plan.deadline.remainingMs(), resetOnProgress: plan.resetOnProgress, outcome: plan.outcomeOnDeadline },
        onTransient,
        refuse: io.refuse,
        onResponseHead: io.onResponseHead,
        onResponseChunk: io.onResponseChunk,
        holdAnswer: io.holdAnswer,
        guardAnswer: io.guardAnswer,
        record,
      }),
      (outcome) => failed(outcome, record, plan),
    );
    if (!guarded.ok) {
      io.refuse({ error: 'upstream_circuit_open', data: { retryAfterMs: guarded.retryAfterMs }, headers: { 'retry-after': String(Math.max(1, Math.ceil(guarded.retryAfterMs / 1000))) } });
      return 'upstream_circuit_open';
    }
    const outcome = guarded.value;
    if (outcome !== 'retry') return outcome;
    if (upstreamRetry.hasSubscribers && retrying !== undefined) upstreamRetry.publish({ outcome: 'retried', reason: retrying.reason });
    await sleep(waitMs);
    if (io.res.destroyed) return 'client_closed';
  }
}

/** Whether an attempt counts as the upstream failing, for the breaker. */
function failed(outcome: AttemptOutcome, record: AttemptRecord, plan: CallPlan): boolean {
  if (outcome === 'retry' || outcome === 'upstream_unavailable' || outcome === 'upstream_timeout') return true;
  if (outcome === 'deadline_exceeded') return plan.deadlineIsTools;
  return outcome === 'forwarded' && FAILING_STATUSES.has(record.status);
}
