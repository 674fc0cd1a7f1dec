import { setTimeout as sleep } from 'node:timers/promises';
import { ExponentialBackoff, fullJitterGenerator, type IBackoff } from 'cockatiel';
import type { Pool } from 'undici';
import type { JsonRpcId } from '../mcp/jsonrpc.ts';
import { upstreamRetry } from '../telemetry/channels.ts';
import {
  attempt,
  type AnswerGuard,
  type AnswerHold,
  type ResponseHeadHook,
  type Settled,
  type Transient,
  type UpstreamRequest,
} from '../upstream/forward.ts';
import type { Admission, UpstreamBreaker } from './breaker.ts';
import { deadlineExceeded, type Deadline } from './deadline.ts';
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

/** The call's request (its body whole) and what watches its answer. */
export interface CallIo extends UpstreamRequest {
  /** A tools/call was classified, so its id is known. */
  readonly rpcId: JsonRpcId;
  readonly body: Buffer;
  readonly onResponseHead?: ResponseHeadHook | undefined;
  readonly onResponseChunk?: ((chunk: Buffer) => void) | undefined;
  /** Holds the answer until what it created is recorded (a task's creator). */
  readonly holdAnswer?: AnswerHold | undefined;
  /** The result guard of this call's tool, when its policy has a `results` section. */
  readonly guardAnswer?: AnswerGuard | undefined;
}

/**
 * How a call ended: `sent` (the client has the upstream's answer, or a cut
 * stream) or `unsent`, with the refusal the caller answers. `status` and
 * `refused` describe the last attempt.
 */
export type CallEnd = Settled;

/** An attempt given up for another, after `waitMs`. */
type Retry = Pick<Settled, 'status' | 'refused'> & {
  readonly kind: 'retry';
  readonly waitMs: number;
  readonly reason: string;
};

/** Longest backoff between two attempts; the deadline usually cuts it shorter. */
const MAX_BACKOFF_MS = 2000;
const FAILING_STATUSES = new Set([502, 503, 504]);
const NO_ATTEMPT = { status: 0, refused: false } as const;

/**
 * Runs one tools/call upstream: under the call's deadline, behind the
 * breaker, retried only on transient failures before any byte reached the
 * client, with full-jitter exponential backoff (cockatiel), never past the
 * deadline, and only while the retry budget allows. Each attempt is its own
 * upstream exchange (and span); this loop alone decides whether there is
 * another, and it writes nothing: a refusal comes back for the caller.
 */
export async function runCall(upstream: Upstream, plan: CallPlan, io: CallIo): Promise<CallEnd> {
  upstream.budget.request();
  let backoff: IBackoff<unknown> | undefined;
  let last: Pick<Settled, 'status' | 'refused'> = NO_ATTEMPT;
  const refusal = deadlineExceeded(plan.outcomeOnDeadline);

  /** How long to wait before retrying `t`, or undefined when it is not retried: past the deadline, or past the budget. */
  const retryWait = (t: Transient): number | undefined => {
    backoff = (
      backoff ??
      new ExponentialBackoff({
        generator: fullJitterGenerator,
        initialDelay: upstream.backoffMs,
        maxDelay: MAX_BACKOFF_MS,
      })
    ).next(undefined);
    const waitMs = t.retryAfterMs ?? backoff.duration;
    if (waitMs >= plan.deadline.remainingMs()) return undefined;
    if (!upstream.budget.tryRetry()) {
      if (upstreamRetry.hasSubscribers) upstreamRetry.publish({ outcome: 'budget_exhausted', reason: t.reason });
      return undefined;
    }
    return waitMs;
  };

  for (let n = 0; ; n++) {
    let remainingMs = plan.deadline.remainingMs();
    if (remainingMs <= 0) return { kind: 'unsent', refusal, ...last };
    const admitting = upstream.breaker.admit();
    let admission: Admission;
    if (admitting instanceof Promise) {
      // It waited for a half-open probe's answer.
      admission = await admitting;
      remainingMs = plan.deadline.remainingMs();
    } else admission = admitting;
    if (!admission.ok) return circuitOpen(admission.retryAfterMs);
    let end: Settled | Retry | undefined;
    try {
      const ended = await attempt(upstream.pool, {
        req: io.req,
        res: io.res,
        headers: io.headers,
        body: io.body,
        rpcId: io.rpcId,
        deadline: { remainingMs, resetOnProgress: plan.resetOnProgress, refusal },
        onResponseHead: io.onResponseHead,
        onResponseChunk: io.onResponseChunk,
        holdAnswer: io.holdAnswer,
        guardAnswer: io.guardAnswer,
      });
      if (ended.kind !== 'transient') end = ended;
      else {
        const waitMs = n < plan.retries ? retryWait(ended) : undefined;
        if (waitMs === undefined) end = await ended.pass();
        else {
          ended.drop();
          end = { kind: 'retry', waitMs, reason: ended.reason, status: ended.status, refused: ended.refused };
        }
      }
    } finally {
      // An attempt that threw (a bug) says nothing against the upstream.
      upstream.breaker.settle(admission, end !== undefined && failed(end, plan));
    }
    if (end.kind !== 'retry') return end;
    last = end;
    if (upstreamRetry.hasSubscribers) upstreamRetry.publish({ outcome: 'retried', reason: end.reason });
    await sleep(end.waitMs);
    if (io.res.destroyed) return { kind: 'sent', outcome: 'client_closed', ...last };
  }
}

function circuitOpen(retryAfterMs: number): CallEnd {
  return {
    kind: 'unsent',
    refusal: {
      error: 'upstream_circuit_open',
      data: { retryAfterMs },
      headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
    },
    ...NO_ATTEMPT,
  };
}

/** Whether an attempt counts as the upstream failing, for the breaker. */
function failed(end: Settled | Retry, plan: CallPlan): boolean {
  if (end.kind === 'retry') return true;
  const outcome = end.kind === 'sent' ? end.outcome : end.refusal.error;
  if (outcome === 'upstream_unavailable' || outcome === 'upstream_timeout') return true;
  if (outcome === 'deadline_exceeded') return plan.deadlineIsTools;
  return outcome === 'forwarded' && FAILING_STATUSES.has(end.status);
}
