import { toolMetadata } from '../../config/policy/policy.ts';
import type { ToolErrors } from '../../config/settings.ts';
import { callDeadlineMs, callerBudget, Deadline, deadlineExceeded } from '../../execution/deadline.ts';
import { readKey } from '../../execution/idempotency-key.ts';
import { runKeyed } from '../../execution/keyed-call.ts';
import { runCall, type CallPlan } from '../../execution/run.ts';
import { taskHold } from '../../execution/task-hold.ts';
import { mayCreateTask } from '../../execution/task-result.ts';
import type { Execution } from '../../execution/wiring.ts';
import { toolCall } from '../../mcp/tool-call.ts';
import { deadlinePassed } from '../../telemetry/channels.ts';
import { concludeCall, refuseCall } from './reply.ts';
import { answerGuard, type ResultGuardDeps } from './result-guard.ts';
import type { Stage } from './stage.ts';

/** What execution shares across calls (built once in main.ts). */
export type ExecuteDeps = Execution;

/**
 * Executes a tools/call the chain allowed: its deadline (the tool's timeout,
 * cut to the caller's budget), its concurrency slot, its idempotency key,
 * then the upstream under the breaker and the retry rules (execution/).
 * What execution hands back, reply.ts writes.
 */
export function executeStage(deps: ExecuteDeps, toolErrors: ToolErrors, results: ResultGuardDeps): Stage {
  const { concurrency } = deps;
  return async (ex, res, headers, body) => {
    const { request: req, message } = ex;
    const call = toolCall(message);
    const meta = toolMetadata(ex.policy, call.name);
    const budget = callerBudget(req, message);
    if (!budget.ok) return refuseCall(ex, res, { error: 'invalid_timeout' }, toolErrors);
    // One rule for the tool's time: its own timeoutMs if the policy sets one, else the process setting.
    const toolTimeoutMs = meta.timeoutMs ?? deps.defaultTimeoutMs;
    const deadlineMs = callDeadlineMs(toolTimeoutMs, budget.ms);
    if (deadlineMs <= 0) {
      if (deadlinePassed.hasSubscribers) deadlinePassed.publish({ phase: 'before_forward' });
      return refuseCall(ex, res, deadlineExceeded('not_started'), toolErrors);
    }
    const max = meta.maxConcurrent;
    if (max !== undefined && !concurrency.tryAcquire(call.name, max)) {
      return refuseCall(
        ex,
        res,
        { error: 'rate_limited', data: { retryAfterMs: 1000 }, headers: { 'retry-after': '1' } },
        toolErrors,
      );
    }
    try {
      const deadline = new Deadline(deadlineMs);
      const key = readKey(req, message);
      const keyed = key.kind === 'key';
      const plan: CallPlan = {
        deadline,
        retries: meta.sideEffect !== 'non_idempotent_write' || keyed ? meta.maxRetries : 0,
        resetOnProgress: meta.resetTimeoutOnProgress,
        outcomeOnDeadline: meta.sideEffect === 'read_only' ? undefined : 'unknown',
        deadlineIsTools: budget.ms === undefined || budget.ms >= toolTimeoutMs,
      };
      const guardAnswer = answerGuard(ex, call.name, meta.results, results);
      const io = {
        req,
        res,
        headers,
        body,
        rpcId: message.id,
        guardAnswer,
        holdAnswer: mayCreateTask(message.params)
          ? taskHold(deps.tasks, { principal: ex.principal.id, tool: call.name }, deps.maxResultBytes)
          : undefined,
      };
      const end = keyed
        ? await runKeyed(
            deps,
            { principal: ex.principal.id, call, key: key.key, sideEffect: meta.sideEffect },
            plan,
            io,
          )
        : await runCall(deps.upstream, plan, io);
      return concludeCall(ex, res, end, guardAnswer, toolErrors);
    } finally {
      if (max !== undefined) concurrency.release(call.name);
    }
  };
}
