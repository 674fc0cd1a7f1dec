import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { toolMetadata, type ToolMetadata } from '../../config/policy/policy.ts';
import { ResponseCapture, type StoredResponse } from '../../upstream/capture.ts';
import { callDeadlineMs, callerBudget, Deadline } from '../../execution/deadline.ts';
import { argumentsDigest, KEY_HEADER, KEY_META, readKey, scopedKey } from '../../execution/idempotency-key.ts';
import type { Settlement } from '../../execution/idempotency-store.ts';
import type { Execution } from '../../execution/wiring.ts';
import { runCall, type CallPlan } from '../../execution/run.ts';
import type { Exchange } from '../../interceptors/contract.ts';
import { isRecord } from '../../json/record.ts';
import { spliceMetaFields } from '../../json/meta-splice.ts';
import { deadlinePassed, idempotencyOutcome, type IdempotencyOutcome } from '../../telemetry/channels.ts';
import { log } from '../../telemetry/log.ts';
import type { AnswerHold, AttemptRecord } from '../../upstream/forward.ts';
import { taskHold } from '../../execution/task-hold.ts';
import { mayCreateTask } from '../../execution/task-result.ts';
import type { Outcome } from '../outcome.ts';
import { refuseCall } from './reply.ts';
import type { ToolErrors } from '../../config/settings.ts';
import type { Refusal } from '../../mcp/jsonrpc.ts';
import type { AnswerGuard } from '../../upstream/forward.ts';
import { answerGuard, judgeWhole, type ResultGuardDeps } from './result-guard.ts';

/** What execution shares across calls (built once in main.ts). */
export type ExecuteDeps = Execution;

export type ExecuteStage = (ex: Exchange, res: ServerResponse, headers: string[], body: Buffer) => Promise<Outcome>;

/** The lease outlives the deadline by this much, so a live holder always settles before its lease runs out. */
const LEASE_GRACE_MS = 2000;
const REPLAYED_META = 'io.toolgate/replayed';

/**
 * Executes a tools/call the chain allowed: its deadline (the tool's timeout,
 * cut to the caller's budget), its concurrency slot, its idempotency key,
 * then the upstream under the breaker and the retry rules.
 */
export function executeStage(deps: ExecuteDeps, toolErrors: ToolErrors, results: ResultGuardDeps): ExecuteStage {
  const { upstream, idempotency, concurrency } = deps;
  const refused = (ex: Exchange, res: ServerResponse, refusal: Refusal): Outcome => refuseCall(ex, res, refusal, toolErrors);
  return async (ex, res, headers, body) => {
    const { request: req, message } = ex;
    const tool = message.name as string;
    const meta = toolMetadata(ex.policy, tool);
    const budget = callerBudget(req, message);
    if (!budget.ok) return refused(ex, res, { error: 'invalid_timeout' });
    // One rule for the tool's time: its own timeoutMs if the policy sets one, else the process setting.
    const toolTimeoutMs = meta.timeoutMs ?? deps.defaultTimeoutMs;
    const deadline = new Deadline(callDeadlineMs(toolTimeoutMs, budget.ms), () => performance.now());
    if (deadline.passed()) {
      if (deadlinePassed.hasSubscribers) deadlinePassed.publish({ phase: 'before_forward' });
      return refused(ex, res, { error: 'deadline_exceeded', data: { outcome: 'not_started' } });
    }
    const max = meta.maxConcurrent;
    if (max !== undefined && !concurrency.tryAcquire(tool, max)) {
      return refused(ex, res, { error: 'rate_limited', data: { retryAfterMs: 1000 }, headers: { 'retry-after': '1' } });
    }
    try {
      const key = readKey(req, message);
      const keyed = key.kind === 'key';
      const plan: CallPlan = {
        deadline,
        retries: meta.sideEffect !== 'non_idempotent_write' || keyed ? meta.maxRetries : 0,
        resetOnProgress: meta.resetTimeoutOnProgress,
        outcomeOnDeadline: meta.sideEffect === 'read_only' ? undefined : 'unknown',
        deadlineIsTools: budget.ms === undefined || budget.ms >= toolTimeoutMs,
      };
      const record: AttemptRecord = { status: 0, refused: false };
      const holdAnswer = mayCreateTask(message.params) ? taskHold(deps.tasks, { principal: ex.principal.id, tool }, deps.maxResultBytes) : undefined;
      const guardAnswer = answerGuard(ex, tool, meta.results, results);
      if (!keyed) return await runCall(upstream, plan, { req, res, headers, body, rpcId: message.id, refuse: (r) => refused(ex, res, r), holdAnswer, guardAnswer }, record);
      return await keyedCall(ex, res, headers, body, key.key, plan, meta, holdAnswer, guardAnswer);
    } finally {
      if (max !== undefined) concurrency.release(tool);
    }
  };

  /**
   * A keyed call runs at most once per key: claimed as PENDING first, sent
   * with the scoped key, and settled with its final result, as UNKNOWN when
   * it may have run without one, or released when it certainly never left.
   */
  async function keyedCall(
    ex: Exchange, res: ServerResponse, headers: string[], body: Buffer, key: string, plan: CallPlan, meta: ToolMetadata, holdAnswer: AnswerHold | undefined, guardAnswer: AnswerGuard | undefined,
  ): Promise<Outcome> {
    const { request: req, message } = ex;
    // Promising one run per key with records a restart forgets would be a lie: refused, loudly.
    if (!idempotency.durable && meta.sideEffect === 'non_idempotent_write') return refused(ex, res, { error: 'idempotency_not_durable' });
    const scope = scopedKey(ex.principal.id, message.name as string, key);
    let claim;
    try {
      claim = await idempotency.claim(scope, argumentsDigest(message), plan.deadline.remainingMs() + LEASE_GRACE_MS);
    } catch (err) {
      log.warn('idempotency store unavailable', { error: (err as { name?: string }).name ?? 'unknown' });
      return refused(ex, res, { error: 'idempotency_unavailable' });
    }
    switch (claim.kind) {
      case 'completed':
        tell('replayed');
        return replay(res, message.id, claim.response, guardAnswer);
      case 'not_stored':
        tell('not_stored');
        return refused(ex, res, { error: 'idempotent_result_not_stored' });
      case 'in_progress':
        tell('in_progress');
        return refused(ex, res, { error: 'call_in_progress', data: { retryAfterMs: claim.retryAfterMs }, headers: { 'retry-after': String(Math.max(1, Math.ceil(claim.retryAfterMs / 1000))) } });
      case 'unknown':
        tell('unknown');
        return refused(ex, res, { error: 'outcome_unknown' });
      case 'reused':
        tell('reused');
        return refused(ex, res, { error: 'idempotency_key_reused' });
      case 'acquired':
        break;
    }
    tell('executed');
    const capture = new ResponseCapture(message.id, deps.maxResultBytes);
    const record: AttemptRecord = { status: 0, refused: false };
    let outcome: Outcome = 'internal_error';
    try {
      outcome = await runCall(upstream, plan, {
        req, res, rpcId: message.id, refuse: (r) => refused(ex, res, r),
        // The upstream sees the scoped key, so two callers' keys never collide in its own deduplication.
        headers: withKeyHeader(headers, scope),
        body: spliceMetaFields(body, { [KEY_META]: scope }) ?? body,
        onResponseHead: (status, h) => capture.head(status, h),
        onResponseChunk: (chunk) => capture.chunk(chunk),
        holdAnswer,
        guardAnswer,
      }, record);
      return outcome;
    } finally {
      const how = settlement(outcome, record, capture, meta);
      if (how.kind === 'completed' && how.response === undefined) tell('not_stored');
      await idempotency.settle(scope, claim.token, how).catch((err: unknown) => {
        // The record stays PENDING and reads as UNKNOWN once its lease runs out: never run twice.
        log.warn('idempotency record not settled', { error: (err as { name?: string }).name ?? 'unknown' });
      });
    }
  }
}

const NOT_RUN_STATUSES = new Set([429, 502, 503, 504]);

/** How a keyed call ended, for its record. */
function settlement(outcome: Outcome, record: AttemptRecord, capture: ResponseCapture, meta: ToolMetadata): Settlement {
  // Refused by the breaker, a refused connection, or an upstream that said it was unavailable: nothing ran.
  if (outcome === 'upstream_circuit_open' || record.refused || (NOT_RUN_STATUSES.has(record.status) && outcome !== 'deadline_exceeded')) return { kind: 'released' };
  const seen = capture.result();
  if (seen.kind === 'response') return { kind: 'completed', response: seen.response };
  if (seen.kind === 'too_large') return { kind: 'completed', response: undefined };
  // A read-only call that ended without a result may simply run again.
  return meta.sideEffect === 'read_only' ? { kind: 'released' } : { kind: 'unknown' };
}

function tell(result: IdempotencyOutcome['result']): void {
  if (idempotencyOutcome.hasSubscribers) idempotencyOutcome.publish({ result });
}

function withKeyHeader(headers: string[], scope: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    if ((headers[i] as string).toLowerCase() !== KEY_HEADER) out.push(headers[i] as string, headers[i + 1] as string);
  }
  out.push('Idempotency-Key', `"${scope}"`);
  return out;
}

/**
 * The stored answer again, said to be a replay in the header payment APIs
 * use and in `_meta`. The record holds what the upstream sent, so the result
 * guard judges it again, under the policy in force now.
 */
function replay(res: ServerResponse, id: Exchange['message']['id'], stored: StoredResponse, guard: AnswerGuard | undefined): Outcome {
  const message: Record<string, unknown> = { ...stored.message, id };
  const result = message.result;
  if (isRecord(result)) message.result = { ...result, _meta: { ...(isRecord(result._meta) ? result._meta : {}), [REPLAYED_META]: true } };
  const text = JSON.stringify(message);
  const judged = stored.status === 200 && guard !== undefined ? judgeWhole(guard, text) : undefined;
  const out = judged?.body ?? text;
  res.writeHead(judged?.status ?? stored.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out), 'idempotent-replayed': 'true' }).end(out);
  return 'answered';
}


