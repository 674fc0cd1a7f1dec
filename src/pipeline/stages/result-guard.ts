import type { IncomingMessage } from 'node:http';
import { resultsEnforcement, type Policy, type ResultGuards } from '../../config/policy/policy.ts';
import { MAX_GUARDED_RESULT_BYTES } from '../../config/policy/schema.ts';
import type { ToolErrors } from '../../config/settings.ts';
import type { Exchange } from '../../interceptors/contract.ts';
import { isRecord, parseRecord } from '../../json/record.ts';
import { refusalBody } from '../../mcp/answer-body.ts';
import type { Refusal } from '../../mcp/jsonrpc.ts';
import { guardResult, type GuardHit } from '../../results/guard.ts';
import { resultGuard } from '../../telemetry/channels.ts';
import type { AnswerGuard, GuardedAnswer } from '../../upstream/forward.ts';
import type { SchemaCache } from '../../validation/cache.ts';

/** Where the guard finds what it needs beyond the exchange: the validators that check edited structuredContent. */
export interface ResultGuardDeps {
  readonly schemas: (policy: Policy) => SchemaCache;
  readonly toolErrors: ToolErrors;
}

/** What the guard reads of a call: its request (for telemetry; none offline), message, policy and catalogue. */
export type GuardedCall = Pick<Exchange, 'message' | 'policy' | 'catalogue'> & {
  readonly request: IncomingMessage | undefined;
};

/** Cached beside the tool's inputSchema validator, under the same contract digest. */
const OUTPUT_KEY = '#outputSchema';

/**
 * The result guard of one tools/call as forward() runs it: the tool's
 * `results` section turned into an `AnswerGuard`, undefined when the tool
 * has none (its answer then streams through untouched, unparsed). Under
 * `enforcement: audit` every judgement is made and recorded, and the answer
 * goes on as it came; only the inspection bound still holds.
 */
export function answerGuard(
  ex: GuardedCall,
  tool: string,
  guards: ResultGuards | undefined,
  deps: ResultGuardDeps,
): AnswerGuard | undefined {
  if (guards === undefined) return undefined;
  const audit = resultsEnforcement(ex.policy, tool, guards) === 'audit';
  const entry = ex.catalogue.get(tool);
  const outputSchema = entry?.tool.outputSchema;
  const structured = outputSchema === undefined;
  const checkOutput =
    entry === undefined || outputSchema === undefined
      ? undefined
      : (value: unknown): boolean => {
          const compiled = deps.schemas(ex.policy).get(entry.digest + OUTPUT_KEY, outputSchema);
          return compiled.ok && compiled.validate(value).ok;
        };
  const limit = guards.maxBytes;
  const request = ex.request;
  const tell = (hits: readonly GuardHit[]): void => {
    if (hits.length > 0 && request !== undefined && resultGuard.hasSubscribers)
      resultGuard.publish({ request, tool, mode: audit ? 'audit' : 'enforce', hits });
  };
  const refused = (refusal: Refusal): GuardedAnswer => ({
    ...refusalBody(ex.message, refusal, deps.toolErrors, structured),
    refusal: refusal.error,
  });
  const tooLarge = (size: number | undefined): GuardedAnswer => {
    tell([{ detector: 'max_bytes', action: 'cut', count: 1 }]);
    return refused({
      error: 'result_too_large',
      data: { ...(size !== undefined && { size }), limit: limit ?? MAX_GUARDED_RESULT_BYTES },
    });
  };
  return {
    maxBytes: audit ? MAX_GUARDED_RESULT_BYTES : (limit ?? MAX_GUARDED_RESULT_BYTES),
    tooLarge,
    judge(text) {
      // Progress and log events carry no result: they are not parsed.
      if (!text.includes('"result"')) return undefined;
      const message = parseRecord(text);
      if (message === undefined || message.id !== ex.message.id || !isRecord(message.result)) return undefined;
      const call = callResultIn(message.result);
      if (call === undefined) return undefined;
      if (limit !== undefined && audit && Buffer.byteLength(text) > limit)
        tell([{ detector: 'max_bytes', action: 'cut', count: 1 }]);
      const guarded = guardResult(call.result, { guards, checkOutput });
      if (guarded.kind === 'pass') return undefined;
      tell(guarded.hits);
      if (audit) return undefined;
      if (guarded.kind === 'edited')
        return { status: 200, body: JSON.stringify({ ...message, result: call.put(guarded.result) }) };
      return refused({ error: guarded.error, ...(guarded.rules.length > 0 && { data: { rules: guarded.rules } }) });
    },
  };
}

/**
 * Where the tool's CallToolResult sits in an answer: the result itself
 * (tools/call, tasks/result), or a finished task's result inlined in its
 * status (2026-07-28 tasks/get). A task's creation or a bare status has
 * none, and passes.
 */
function callResultIn(result: Record<string, unknown>):
  | {
      readonly result: Record<string, unknown>;
      readonly put: (edited: Readonly<Record<string, unknown>>) => Record<string, unknown>;
    }
  | undefined {
  if (Array.isArray(result.content) || Object.hasOwn(result, 'structuredContent'))
    return { result, put: (edited) => ({ ...edited }) };
  const inner = result.result;
  return isRecord(inner) && Array.isArray(inner.content)
    ? { result: inner, put: (edited) => ({ ...result, result: edited }) }
    : undefined;
}

/**
 * The guard's word on one result, exactly as the proxy would send it, for
 * the offline doors (`policy test`): the JSON-RPC answer toolgate would
 * write, or undefined when the result would go on as it came.
 */
export function guardOffline(
  ex: GuardedCall,
  tool: string,
  guards: ResultGuards | undefined,
  deps: ResultGuardDeps,
  result: Readonly<Record<string, unknown>>,
): GuardedAnswer | undefined {
  const guard = answerGuard(ex, tool, guards, deps);
  return guard === undefined
    ? undefined
    : judgeWhole(guard, JSON.stringify({ jsonrpc: '2.0', id: ex.message.id, result }));
}

/** A whole answer toolgate holds already (a replay, an offline case): measured against the bound, then judged. */
export function judgeWhole(guard: AnswerGuard, text: string): GuardedAnswer | undefined {
  const size = Buffer.byteLength(text);
  return size > guard.maxBytes ? guard.tooLarge(size) : guard.judge(text);
}
