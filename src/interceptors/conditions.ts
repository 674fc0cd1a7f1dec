import {
  compileCondition,
  conditionBindings,
  type Condition,
  type ConditionBindings,
} from '../config/policy/conditions.ts';
import { calledTool } from '../mcp/tool-call.ts';
import { toolMetadata } from '../config/policy/policy.ts';
import { decideMatching, denyBy, enforcedOrAllow, isAudit, unlessLoosening } from '../grants/rules.ts';
import { WILDCARD, type GrantRow } from '../config/policy/grant-row.ts';
import type { Decision, GrantSnapshot } from '../grants/types.ts';
import { callArguments } from '../mcp/classify.ts';
import { deny, type Exchange, type Interceptor, type Verdict } from './contract.ts';

export interface CallDecision {
  readonly decision: Decision;
  /** No deciding row's condition held: the ones that decided could not be evaluated. */
  readonly failed: boolean;
}

/**
 * The grant decision for one call of a tool with conditional rows, under the
 * grant rules: exact rows before `*` rows, and at each level deny rows first.
 * A row without a condition always applies. A condition that cannot be
 * evaluated never allows: such an allow row does not apply, such a deny row
 * does, and a refusal decided only by such rows says `condition_error`.
 *
 * At a level, enforced deny rows are read before audit-mode ones and decide
 * as soon as one holds; the audit-mode deny rows are still evaluated, so
 * those that hold are recorded (`wouldDeny`), and decide (shadowed) only
 * when no enforced row holds. Allow rows are read only when no deny row
 * holds, and stop at the first that does. `skip` leaves deny rows out, as a
 * shadowed refusal lets a call through: approval is asked as if they were
 * absent. Undefined when the tool has no conditional row for this principal
 * and nothing is skipped: the grants stage already decided.
 */
export function decideCall(ex: Exchange, skip?: (row: GrantRow) => boolean): CallDecision | undefined {
  const tool = ex.message.name;
  if (tool === undefined) return undefined;
  const rows = ex.snapshot.conditional.get(tool) ?? (skip === undefined ? undefined : rowsOf(ex.snapshot, tool));
  if (rows === undefined) return undefined;
  let bindings: ConditionBindings | undefined;
  const holds = (c: Checked): boolean | undefined =>
    c.condition === undefined ? true : c.condition.evaluate((bindings ??= bind(ex, tool)));
  const first = decideLevels(rows, holds, skip);
  if (skip !== undefined) return first;
  // As the grant rules say (grants/rules.ts): an audit-mode row never loosens what is enforced.
  let failed = first.failed;
  const decision = unlessLoosening(first.decision, () => {
    const again = decideLevels(rows, holds, (r) => !enforcedOrAllow(r));
    failed = again.failed;
    return again.decision;
  });
  return decision === first.decision ? first : { decision, failed };
}

function decideLevels(
  rows: readonly GrantRow[],
  holds: (c: Checked) => boolean | undefined,
  skip: ((row: GrantRow) => boolean) | undefined,
): CallDecision {
  let allowFailed = false;
  for (const { exact, denies, allows } of levelsOf(rows)) {
    const held: Checked[] = [];
    const surely = new Set<Checked>();
    let settled = false;
    for (const c of denies) {
      if (skip?.(c.row) === true) continue;
      const audit = isAudit(c.row);
      // An enforced row that surely holds settles the refusal; audit rows are still read, for the record.
      if (settled && !audit) continue;
      const h = holds(c);
      if (h === false) continue;
      held.push(c);
      if (h === true) {
        surely.add(c);
        if (!audit) settled = true;
      }
    }
    if (held.length > 0) {
      // Rows that surely held name the refusal before rows that held because they could not be read.
      const decision = denyBy(
        exact ? 'exact_deny' : 'wildcard_deny',
        [...held.filter((c) => surely.has(c)), ...held.filter((c) => !surely.has(c))].map((c) => c.row),
      );
      return { decision, failed: !held.some((c) => surely.has(c) && decision.rows.includes(c.row)) };
    }
    for (const c of allows) {
      const h = holds(c);
      if (h === true)
        return {
          decision: Object.freeze({
            effect: 'allow',
            reason: exact ? 'exact_allow' : 'wildcard_allow',
            rows: Object.freeze([c.row]),
          }),
          failed: false,
        };
      if (h === undefined) allowFailed = true;
    }
  }
  return {
    decision: decideMatching([], skip === undefined ? rows : rows.filter((r) => !skip(r))),
    failed: allowFailed,
  };
}

/** A snapshot's rows for one tool (the unconditional ones are otherwise decided once, ahead of time), per row set. */
const toolRows = new WeakMap<readonly GrantRow[], Map<string, readonly GrantRow[]>>();

function rowsOf(snapshot: GrantSnapshot, tool: string): readonly GrantRow[] {
  let byTool = toolRows.get(snapshot.rows);
  if (byTool === undefined) {
    byTool = new Map();
    for (const r of snapshot.rows) byTool.set(r.tool, [...(byTool.get(r.tool) ?? []), r]);
    toolRows.set(snapshot.rows, byTool);
  }
  return byTool.get(tool) ?? [];
}

function bind(ex: Exchange, tool: string): ConditionBindings {
  return conditionBindings({
    principal: ex.principal,
    tool: {
      name: tool,
      metadata: toolMetadata(ex.policy, tool),
      annotations: ex.catalogue.get(tool)?.tool.annotations,
    },
    args: callArguments(ex.message),
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
    const checked = (r: GrantRow): Checked => ({
      row: r,
      condition: r.when === undefined ? undefined : conditionOf(r.when),
    });
    out = [true, false].map((exact) => {
      const level = rows.filter((r) => (r.principal !== WILDCARD) === exact);
      // A row asking for approval is read before plain allows: the stricter outcome wins when both hold.
      const allows = level.filter((r) => r.effect === 'allow');
      const denies = level.filter((r) => r.effect === 'deny');
      return {
        exact,
        denies: [...denies.filter((r) => !isAudit(r)), ...denies.filter(isAudit)].map(checked),
        allows: [
          ...allows.filter((r) => r.approval !== undefined),
          ...allows.filter((r) => r.approval === undefined),
        ].map(checked),
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
      const rule = (d.rows[0] ?? ex.snapshot.conditional.get(calledTool(ex.message))?.find((r) => r.when !== undefined))
        ?.name;
      if (d.effect === 'allow') return rule === undefined ? { kind: 'pass' } : { kind: 'pass', rule };
      const refused = deny('tool_not_granted', { reason: call.failed ? 'condition_error' : 'condition' });
      return {
        ...refused,
        ...(d.audit === true && { audit: true as const }),
        ...(rule !== undefined && { rule }),
        ...wouldDenyOf(d),
      };
    },
  };
}

/** The verdict field that records audit-mode rows held beside an enforced refusal. */
export function wouldDenyOf(d: Decision): { wouldDeny?: { rule: string | undefined } } {
  const first = d.wouldDeny?.[0];
  return first === undefined ? {} : { wouldDeny: { rule: first.name } };
}
