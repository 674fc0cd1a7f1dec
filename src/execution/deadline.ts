import { performance } from 'node:perf_hooks';
import type { IncomingMessage } from 'node:http';
import type { Classified } from '../mcp/classify.ts';
import type { Refusal } from '../mcp/jsonrpc.ts';

/** The caller's remaining time in milliseconds, as a header (like gRPC's grpc-timeout, but plain milliseconds). */
const BUDGET_HEADER = 'toolgate-timeout-ms';
/** The same, in `params._meta`, for clients that cannot set headers. */
const BUDGET_META = 'io.toolgate/timeoutMs';

const MAX_BUDGET_MS = 3_600_000;
const WHOLE = /^\d{1,7}$/;

export type Budget = { readonly ok: true; readonly ms: number | undefined } | { readonly ok: false };

/**
 * The caller's budget for one call: the smaller of the header and the
 * `_meta` field when both are given; undefined when neither is. A value
 * that is not a whole number of milliseconds in range is refused rather
 * than ignored: a caller that meant to bound its wait must learn it did not.
 */
export function callerBudget(req: IncomingMessage, message: Classified): Budget {
  let ms: number | undefined;
  const header = req.headers[BUDGET_HEADER];
  if (header !== undefined) {
    const n = typeof header === 'string' && WHOLE.test(header.trim()) ? Number(header.trim()) : NaN;
    if (!(n <= MAX_BUDGET_MS)) return { ok: false };
    ms = n;
  }
  const meta = message.params?._meta;
  const field = meta !== null && typeof meta === 'object' ? (meta as Record<string, unknown>)[BUDGET_META] : undefined;
  if (field !== undefined) {
    if (typeof field !== 'number' || !Number.isInteger(field) || field < 0 || field > MAX_BUDGET_MS)
      return { ok: false };
    ms = ms === undefined ? field : Math.min(ms, field);
  }
  return ms === undefined ? NO_BUDGET : { ok: true, ms };
}

/** Nearly every call sends no budget. */
const NO_BUDGET: Budget = Object.freeze({ ok: true, ms: undefined });

/** One call's deadline on the monotonic clock. */
export class Deadline {
  readonly atMs: number;

  constructor(ms: number) {
    this.atMs = performance.now() + ms;
  }

  remainingMs(): number {
    return Math.max(0, this.atMs - performance.now());
  }
}

/** The deadline of one call: the tool's timeout, cut to the caller's budget when it sent one. */
export function callDeadlineMs(toolTimeoutMs: number, budgetMs: number | undefined): number {
  return budgetMs === undefined ? toolTimeoutMs : Math.min(toolTimeoutMs, budgetMs);
}

/**
 * The one refusal for a passed deadline. `error.data.outcome` says what the
 * caller may assume: `not_started` when nothing was sent, `unknown` when a
 * call that may change state was in flight; a read-only call says nothing.
 */
export function deadlineExceeded(outcome: 'not_started' | 'unknown' | undefined): Refusal {
  return DEADLINE_REFUSALS[outcome ?? 'silent'];
}

/** Built once: every call's plan names one, and most calls never need it. */
const DEADLINE_REFUSALS: Readonly<Record<'not_started' | 'unknown' | 'silent', Refusal>> = Object.freeze({
  not_started: Object.freeze({ error: 'deadline_exceeded', data: Object.freeze({ outcome: 'not_started' }) }),
  unknown: Object.freeze({ error: 'deadline_exceeded', data: Object.freeze({ outcome: 'unknown' }) }),
  silent: Object.freeze({ error: 'deadline_exceeded' }),
});
