import { compileCondition, conditionBindings, type ConditionBindings } from '../config/policy/conditions.ts';
import { toolMetadata } from '../config/policy.ts';
import { decideMatching } from '../grants/rules.ts';
import type { Decision, GrantRow } from '../grants/types.ts';
import { deny, type Exchange, type Interceptor, type Verdict } from '../pipeline/types.ts';

export interface CallDecision {
  readonly decision: Decision;
  /** Some condition could not be evaluated: the call is refused whatever the other rows say. */
  readonly failed: boolean;
}

/**
 * The grant decision for one call of a tool with conditional rows: each
 * applicable row whose condition holds takes part, then the grant rules
 * decide as for unconditional rows. A condition that fails to evaluate
 * refuses the call (never allows it). Undefined when the tool has no
 * conditional row for this principal: the grants stage already decided.
 */
export function decideCall(ex: Exchange): CallDecision | undefined {
  const tool = ex.message.name;
  const rows = tool === undefined ? undefined : ex.snapshot.conditional.get(tool);
  if (tool === undefined || rows === undefined) return undefined;
  let bindings: ConditionBindings | undefined;
  const matching: GrantRow[] = [];
  const failed: GrantRow[] = [];
  for (const row of rows) {
    if (row.when === undefined) {
      matching.push(row);
      continue;
    }
    bindings ??= conditionBindings({
      principal: ex.principal,
      tool: { name: tool, metadata: toolMetadata(ex.policy, tool), annotations: ex.catalogue.get(tool)?.tool.annotations },
      args: ex.message.params?.arguments,
      request: { protocolVersion: ex.message.protocolVersion, timeMs: Date.now() },
    });
    const compiled = compileCondition(row.when);
    const holds = compiled.ok ? compiled.condition.evaluate(bindings) : undefined;
    if (holds === undefined) failed.push(row);
    else if (holds) matching.push(row);
  }
  if (failed.length > 0) {
    const audit = failed.every((r) => r.enforcement === 'audit');
    return { decision: Object.freeze({ effect: 'deny', reason: 'no_grant', rows: Object.freeze(failed), ...(audit && { audit: true as const }) }), failed: true };
  }
  return { decision: decideMatching(matching, rows), failed: false };
}

/**
 * Grant conditions, decided once the arguments are known to be valid: the
 * chain runs it after the arguments stage, and the grants stage before
 * everything lets through only calls some row could allow. A refusal is
 * 403 `tool_not_granted` with `reason` `condition` or `condition_error` and
 * never names the arguments or the expression.
 */
export function conditionsInterceptor(): Interceptor {
  return {
    name: 'conditions',
    methods: ['tools/call'],
    applies: (ex) => ex.message.name !== undefined && ex.snapshot.conditional.has(ex.message.name),
    intercept(ex): Verdict {
      const call = decideCall(ex);
      if (call === undefined) return { kind: 'pass' };
      const d = call.decision;
      // No row matched: the conditional rows that did not hold decided.
      const rule = (d.rows[0] ?? ex.snapshot.conditional.get(ex.message.name as string)?.find((r) => r.when !== undefined))?.name;
      if (d.effect === 'allow') return rule === undefined ? { kind: 'pass' } : { kind: 'pass', rule };
      const refused = deny('tool_not_granted', { reason: call.failed ? 'condition_error' : 'condition' });
      return { ...refused, ...(d.audit === true && { audit: true as const }), ...(rule !== undefined && { rule }) } as Verdict;
    },
  };
}
