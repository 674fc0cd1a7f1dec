import type { ToolMetadata } from '../config/policy/policy.ts';
import { spliceMetaFields } from '../json/meta-splice.ts';
import type { ToolCall } from '../mcp/tool-call.ts';
import { idempotencyOutcome, type IdempotencyOutcome } from '../telemetry/channels.ts';
import { log } from '../telemetry/log.ts';
import { ResponseCapture, type StoredResponse } from '../upstream/capture.ts';
import { argumentsDigest, KEY_HEADER, KEY_META, scopedKey } from './idempotency-key.ts';
import type { IdempotencyStore, Settlement } from './idempotency-store.ts';
import { runCall, type CallEnd, type CallIo, type CallPlan, type Upstream } from './run.ts';

export interface KeyedCallDeps {
  readonly upstream: Upstream;
  readonly idempotency: IdempotencyStore;
  /** The largest answer a record keeps for replay. */
  readonly maxResultBytes: number;
}

/** Whose call, with which key. */
export interface KeyedCall {
  readonly principal: string;
  readonly call: ToolCall;
  readonly key: string;
  readonly sideEffect: ToolMetadata['sideEffect'];
}

/** A keyed call also ends in the stored answer of the run that held its key. */
export type KeyedEnd = CallEnd | { readonly kind: 'replay'; readonly response: StoredResponse };

/** The lease outlives the deadline by this much, so a live holder always settles before its lease runs out. */
const LEASE_GRACE_MS = 2000;
const NOT_RUN_STATUSES = new Set([429, 502, 503, 504]);

/**
 * A keyed call runs at most once per key: claimed as PENDING first, sent
 * with the scoped key, and settled with its final result, as UNKNOWN when
 * it may have run without one, or released when it certainly never left.
 * It writes nothing: refusals and the replay come back for the caller.
 */
export async function runKeyed(deps: KeyedCallDeps, keyed: KeyedCall, plan: CallPlan, io: CallIo): Promise<KeyedEnd> {
  const { idempotency } = deps;
  // Promising one run per key with records a restart forgets would be a lie: refused, loudly.
  if (!idempotency.durable && keyed.sideEffect === 'non_idempotent_write') return refused('idempotency_not_durable');
  const scope = scopedKey(keyed.principal, keyed.call.name, keyed.key);
  let claim;
  try {
    claim = await idempotency.claim(scope, argumentsDigest(keyed.call), plan.deadline.remainingMs() + LEASE_GRACE_MS);
  } catch (err) {
    log.warn('idempotency store unavailable', { error: (err as { name?: string }).name ?? 'unknown' });
    return refused('idempotency_unavailable');
  }
  switch (claim.kind) {
    case 'completed':
      tell('replayed');
      return { kind: 'replay', response: claim.response };
    case 'not_stored':
      tell('not_stored');
      return refused('idempotent_result_not_stored');
    case 'in_progress': {
      tell('in_progress');
      const retryAfter = String(Math.max(1, Math.ceil(claim.retryAfterMs / 1000)));
      return {
        kind: 'unsent',
        refusal: {
          error: 'call_in_progress',
          data: { retryAfterMs: claim.retryAfterMs },
          headers: { 'retry-after': retryAfter },
        },
        status: 0,
        refused: false,
      };
    }
    case 'unknown':
      tell('unknown');
      return refused('outcome_unknown');
    case 'reused':
      tell('reused');
      return refused('idempotency_key_reused');
    case 'acquired':
      break;
  }
  tell('executed');
  const capture = new ResponseCapture(io.rpcId, deps.maxResultBytes);
  let end: CallEnd | undefined;
  try {
    end = await runCall(deps.upstream, plan, {
      ...io,
      // The upstream sees the scoped key, so two callers' keys never collide in its own deduplication.
      headers: withKeyHeader(io.headers, scope),
      body: spliceMetaFields(io.body, { [KEY_META]: scope }) ?? io.body,
      onResponseHead: (status, h) => capture.head(status, h),
      onResponseChunk: (chunk) => capture.chunk(chunk),
    });
    return end;
  } finally {
    const how = settlement(end, capture, keyed.sideEffect);
    if (how.kind === 'completed' && how.response === undefined) tell('not_stored');
    await idempotency.settle(scope, claim.token, how).catch((err: unknown) => {
      // The record stays PENDING and reads as UNKNOWN once its lease runs out: never run twice.
      log.warn('idempotency record not settled', { error: (err as { name?: string }).name ?? 'unknown' });
    });
  }
}

function refused(
  error:
    | 'idempotency_not_durable'
    | 'idempotency_unavailable'
    | 'idempotent_result_not_stored'
    | 'outcome_unknown'
    | 'idempotency_key_reused',
): CallEnd {
  return { kind: 'unsent', refusal: { error }, status: 0, refused: false };
}

/** How a keyed call ended, for its record; `end` is undefined when the run threw. */
function settlement(
  end: CallEnd | undefined,
  capture: ResponseCapture,
  sideEffect: ToolMetadata['sideEffect'],
): Settlement {
  if (end !== undefined && neverRan(end)) return { kind: 'released' };
  const seen = capture.result();
  if (seen.kind === 'response') return { kind: 'completed', response: seen.response };
  if (seen.kind === 'too_large') return { kind: 'completed', response: undefined };
  // A read-only call that ended without a result may simply run again.
  return sideEffect === 'read_only' ? { kind: 'released' } : { kind: 'unknown' };
}

/** Refused by the breaker, a refused connection, or an upstream that said it was unavailable: nothing ran. */
function neverRan(end: CallEnd): boolean {
  const outcome = end.kind === 'sent' ? end.outcome : end.refusal.error;
  return (
    outcome === 'upstream_circuit_open' ||
    end.refused ||
    (NOT_RUN_STATUSES.has(end.status) && outcome !== 'deadline_exceeded')
  );
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
