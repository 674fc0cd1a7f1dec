import { compileCondition, conditionBindings, type Condition, type ConditionBindings } from '../config/policy/conditions.ts';
import { toolMetadata } from '../config/policy/policy.ts';
import { decideMatching } from '../grants/rules.ts';
import { WILDCARD, type GrantRow } from '../config/policy/grant-row.ts';
import type { Decision } from '../grants/types.ts';
import { deny, type Exchange, type Interceptor, type Verdict } from './contract.ts';

export interface CallDecision {
  readonly decision: Decision;
  /** A condition that decided the refusal could not be evaluated. */
  readonly failed: boolean;
}

/**
 * The grant decision for one call of a tool with conditional rows, under the
 * grant rules: exact rows before `*` rows, and at each level deny rows first.
 * A row without a condition always applies; a condition is evaluated only
 * when its row could still change the outcome, so a decision stops at the
 * first deny row that applies, else the first allow row that does. A
 * condition that cannot be evaluated never allows: such an allow row does not
 * apply, such a deny row does, and either way the refusal says
 * `condition_error`. Undefined when the tool has no conditional row for this
 * principal: the grants stage already decided.
 */
export function decideCall(ex: Exchange): CallDecision | undefined {
  const tool = ex.message.name;
  const rows = tool === undefined ? undefined : ex.snapshot.conditional.get(tool);
  if (tool === undefined || rows === undefined) return undefined;
  let bindings: ConditionBindings | undefined;
  let failed = false;
  for (const { exact, denies, allows } of levelsOf(rows)) {
    for (const row of denies) {
      const h = row.condition === undefined ? true : row.condition.evaluate((bindings ??= bind(ex, tool)));
      if (h === false) continue;
      const decision: Decision = { effect: 'deny', reason: exact ? 'exact_deny' : 'wildcard_deny', rows: Object.freeze([row.row]) };
      return { decision: Object.freeze(row.row.enforcement === 'audit' ? { ...decision, audit: true as const } : decision), failed: h === undefined };
    }
    for (const row of allows) {
      const h = row.condition === undefined ? true : row.condition.evaluate((bindings ??= bind(ex, tool)));
      if (h === true) return { decision: Object.freeze({ effect: 'allow', reason: exact ? 'exact_allow' : 'wildcard_allow', rows: Object.freeze([row.row]) }), failed: false };
      if (h === undefined) failed = true;
    }
  }
  return { decision: decideMatching([], rows), failed };
}

function bind(ex: Exchange, tool: string): ConditionBindings {
  return conditionBindings({
    principal: ex.principal,
    tool: { name: tool, metadata: toolMetadata(ex.policy, tool), annotations: ex.catalogue.get(tool)?.tool.annotations },
    args: ex.message.params?.arguments,
    request: { protocolVersion: ex.message.protocolVersion, timeMs: Date.now() },
  });
}

interface Checked {
  readonly row: GrantRow;
  /** Undefined: the row always applies. */
  readonly condition: Condition | undefined;
}

interface Level {
  readonly exact: boolean;
  readonly denies: readonly Checked[];
  readonly allows: readonly Checked[];
}

/** A snapshot's rows for a tool, split once into the order the rules read them, conditions resolved. */
const levels = new WeakMap<readonly GrantRow[], readonly Level[]>();

function levelsOf(rows: readonly GrantRow[]): readonly Level[] {
  let out = levels.get(rows);
  if (out === undefined) {
    const checked = (r: GrantRow): Checked => ({ row: r, condition: r.when === undefined ? undefined : conditionOf(r.when) });
    out = [true, false].map((exact) => {
      const level = rows.filter((r) => (r.principal !== WILDCARD) === exact);
      // A row asking for approval is read before plain allows: the stricter outcome wins when both hold.
      const allows = level.filter((r) => r.effect === 'allow');
      return {
        exact,
        denies: level.filter((r) => r.effect === 'deny').map(checked),
        allows: [...allows.filter((r) => r.approval !== undefined), ...allows.filter((r) => r.approval === undefined)].map(checked),
      };
    });
    levels.set(rows, out);
  }
  return out;
}

/** Rows reach a snapshot only when their condition compiles; should one not, it fails like an evaluation error. */
const FAILING: Condition = Object.freeze({ source: '', evaluate: () => undefined });

function conditionOf(source: string): Condition {
  const compiled = compileCondition(source);
  return compiled.ok ? compiled.condition : FAILING;
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
