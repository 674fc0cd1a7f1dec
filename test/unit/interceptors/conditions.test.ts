import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { IncomingMessage } from 'node:http';
import { compileCondition, conditionBindings } from '../../../src/config/policy/conditions.ts';
import { normalizeRow, WILDCARD, type GrantRow } from '../../../src/config/policy/grant-row.ts';
import { parsePolicy, type Policy } from '../../../src/config/policy/policy.ts';
import { decideCall } from '../../../src/interceptors/conditions.ts';
import type { Exchange } from '../../../src/interceptors/contract.ts';
import { decide, snapshotFor } from '../../../src/grants/snapshot.ts';
import type { CatalogueView } from '../../../src/catalogue/view.ts';
import type { Classified } from '../../../src/mcp/classify.ts';

const TOOL = 'refund';
const PRINCIPAL = { id: 'alice', scopes: new Set(['pay']), credentialStrength: 'static' as const };
const parsed = parsePolicy('version: 1\ngrants: []\n');
assert.ok(parsed.ok);
const POLICY: Policy = parsed.policy;
const CATALOGUE = { get: () => undefined } as unknown as CatalogueView;

/** Conditions that hold, fail, or cannot be evaluated, depending on the arguments. */
const CONDITIONS = [
  'args.n > 5',
  'args.n == 3',
  'args.q.contains("drop")',
  'args.q.contains("del")',
  'args.missing > 1',
  'true',
  'false',
  'args.n <= 9007199254740992',
];

interface RowSpec {
  readonly wildcard: boolean;
  readonly scoped: boolean;
  readonly effect: 'allow' | 'deny' | 'require_approval';
  readonly when: string | undefined;
  readonly audit: boolean;
}

const rowSpec: fc.Arbitrary<RowSpec> = fc.record({
  wildcard: fc.boolean(),
  scoped: fc.boolean(),
  effect: fc.constantFrom('allow', 'deny', 'require_approval'),
  when: fc.option(fc.constantFrom(...CONDITIONS), { nil: undefined }),
  audit: fc.boolean(),
});

const argsSpec = fc.record({
  n: fc.oneof(fc.integer({ min: 0, max: 10 }), fc.constant(9007199254740993n)),
  q: fc.constantFrom('', 'drop', 'del', 'drop del', 'select'),
});

function rowOf(spec: RowSpec, i: number): GrantRow {
  const r = normalizeRow({
    principal: spec.wildcard ? WILDCARD : PRINCIPAL.id,
    tool: TOOL,
    scopes: spec.wildcard ? [spec.scoped ? 'pay' : 'other'].slice(0, spec.scoped ? 1 : 0) : [],
    effect: spec.effect,
    name: `row-${i}`,
    ...(spec.when !== undefined && { when: spec.when }),
    ...(spec.audit && { enforcement: 'audit' }),
    ...(spec.effect === 'require_approval' && { approval: { approverScope: 'pay.approve' } }),
  });
  assert.ok(r);
  return r;
}

interface Outcome {
  readonly effect: 'allow' | 'deny';
  readonly reason: string;
  readonly audit: boolean;
  /** The row the decision names first: the one a refusal or `rule` label names. */
  readonly deciding: string | undefined;
  /** The row asking for approval, when the call is allowed by one. */
  readonly approval: string | undefined;
  /** A refusal only by rows that could not be evaluated (`condition_error`). */
  readonly failed: boolean;
  /** Audit-mode deny rows that held beside the enforced refusal. */
  readonly wouldDeny: readonly string[];
}

interface Expected extends Omit<Outcome, 'deciding'> {
  /** Any of these may be named: rows of the deciding kind that surely held (else that could not be read). */
  readonly deciding: readonly (string | undefined)[];
}

/**
 * The README's rules, applied literally and without short cuts: every
 * condition is evaluated; a row applies when it has no condition or its
 * condition holds, and a deny row also when its condition cannot be
 * evaluated; exact rows decide over `*` rows when any applies; at that level
 * deny wins, shadowed only when every applying deny row is in audit mode;
 * no applying row is no_grant, shadowed when some candidate row is in audit
 * mode. Among allow rows one asking for approval wins. And an audit-mode row
 * never loosens enforcement: a refusal by audit-mode deny rows alone is
 * decided again without them, and an enforced refusal then stands.
 */
function reference(rows: readonly GrantRow[], args: Record<string, unknown>): Expected {
  const bindings = conditionBindings({
    principal: PRINCIPAL,
    tool: { name: TOOL, metadata: {}, annotations: undefined },
    args,
    request: { protocolVersion: undefined, timeMs: 0 },
  });
  const value = (r: GrantRow): boolean | undefined => {
    if (r.when === undefined) return true;
    const c = compileCondition(r.when);
    assert.ok(c.ok);
    return c.condition.evaluate(bindings);
  };
  const isAudit = (r: GrantRow) => r.enforcement === 'audit';
  const rules = (candidates: readonly GrantRow[]): Expected & { readonly denies: readonly GrantRow[] } => {
    const matching = candidates.filter((r) => value(r) === true || (r.effect === 'deny' && value(r) === undefined));
    const exact = matching.filter((r) => r.principal !== WILDCARD);
    const level = exact.length > 0 ? exact : matching;
    const kind = exact.length > 0 ? 'exact' : 'wildcard';
    const denies = level.filter((r) => r.effect === 'deny');
    if (denies.length > 0) {
      const enforced = denies.filter((r) => !isAudit(r));
      const deciding = enforced.length > 0 ? enforced : denies;
      const sure = deciding.filter((r) => value(r) === true);
      return {
        effect: 'deny',
        reason: `${kind}_deny`,
        audit: enforced.length === 0,
        deciding: (sure.length > 0 ? sure : deciding).map((r) => r.name),
        approval: undefined,
        failed: sure.length === 0,
        wouldDeny: enforced.length > 0 ? denies.filter(isAudit).map((r) => r.name as string) : [],
        denies,
      };
    }
    if (level.length > 0) {
      const asking = level.find((r) => r.approval !== undefined);
      return {
        effect: 'allow',
        reason: `${kind}_allow`,
        audit: false,
        deciding: [(asking ?? level[0])?.name],
        approval: asking?.name,
        failed: false,
        wouldDeny: [],
        denies: [],
      };
    }
    return {
      effect: 'deny',
      reason: 'no_grant',
      audit: candidates.some(isAudit),
      deciding: [undefined],
      approval: undefined,
      failed: candidates.some((r) => r.effect === 'allow' && value(r) === undefined),
      wouldDeny: [],
      denies: [],
    };
  };
  const { denies: _d, ...d } = rules(rows);
  if (d.effect === 'deny' && d.audit && d.reason !== 'no_grant') {
    const { denies: _f, ...f } = rules(rows.filter((r) => r.effect !== 'deny' || !isAudit(r)));
    if (f.effect === 'deny' && !f.audit) return { ...f, wouldDeny: _d.map((r) => r.name as string) };
  }
  return d;
}

function exchange(rows: readonly GrantRow[], args: Record<string, unknown>) {
  const snap = snapshotFor([...rows], PRINCIPAL, 1);
  assert.ok(snap.ok);
  const message = {
    ok: true,
    era: 'modern',
    protocolVersion: undefined,
    kind: 'request',
    id: 1,
    method: 'tools/call',
    name: TOOL,
    params: { name: TOOL, arguments: args },
    exactArguments: args,
  } as Classified;
  const ex = {
    request: {} as IncomingMessage,
    message,
    principal: PRINCIPAL,
    policy: POLICY,
    snapshot: snap.snapshot,
    catalogue: CATALOGUE,
    rowsForTool: () => Promise.resolve([]),
  } satisfies Exchange;
  return { ex, applicable: snap.snapshot.rows.filter((r) => r.tool === TOOL) };
}

/** What the one decision path (the grants stage's precomputed decision, then the conditions stage) says. */
function implementation(ex: Exchange): Outcome {
  const call = decideCall(ex);
  const d = call?.decision ?? decide(ex.snapshot, TOOL);
  return {
    effect: d.effect,
    reason: d.reason,
    audit: d.audit === true,
    deciding: d.rows[0]?.name,
    approval: d.effect === 'allow' ? d.rows.find((r) => r.approval !== undefined)?.name : undefined,
    failed: call?.failed ?? false,
    wouldDeny: (d.wouldDeny ?? []).map((r) => r.name as string),
  };
}

describe('decideCall against a reference evaluator of the documented rules', () => {
  const RUNS = 20_000;

  it(`agrees on effect, reason, shadowing, the deciding row, approval and condition_error (${RUNS} generated cases)`, () => {
    fc.assert(
      fc.property(fc.array(rowSpec, { minLength: 1, maxLength: 8 }), argsSpec, (specs, args) => {
        const { ex, applicable } = exchange(specs.map(rowOf), args);
        const want = reference(applicable, args);
        const got = implementation(ex);
        assert.deepEqual(
          { effect: got.effect, audit: got.audit, approval: got.approval },
          { effect: want.effect, audit: want.audit, approval: want.approval },
        );
        if (ex.snapshot.conditional.has(TOOL) || applicable.every((r) => r.when === undefined)) {
          // Decided per call, or by rows without conditions: what decided is named.
          assert.equal(got.reason, want.reason);
          assert.ok(want.deciding.includes(got.deciding), `names ${got.deciding}, one of ${want.deciding.join(', ')}`);
          if (ex.snapshot.conditional.has(TOOL)) assert.equal(got.failed, want.failed, 'condition_error');
          assert.deepEqual([...got.wouldDeny].sort(), [...want.wouldDeny].sort(), 'would_deny rows');
        } else {
          // Conditional rows that cannot change the outcome: an enforced refusal by the rows
          // without conditions, decided once per snapshot whatever the arguments.
          assert.ok(!got.audit, 'a refusal decided ahead of the call is never shadowed');
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('with the audit-mode deny rows left out (what a shadowed refusal lets through), approval is still asked as the rules say', () => {
    fc.assert(
      fc.property(fc.array(rowSpec, { minLength: 1, maxLength: 8 }), argsSpec, (specs, args) => {
        const { ex, applicable } = exchange(specs.map(rowOf), args);
        const shadowedDeny = (r: GrantRow) => r.effect === 'deny' && r.enforcement === 'audit';
        const want = reference(
          applicable.filter((r) => !shadowedDeny(r)),
          args,
        );
        const d = decideCall(ex, shadowedDeny)?.decision;
        assert.ok(d !== undefined);
        assert.equal(d.effect, want.effect);
        assert.equal(
          d.effect === 'allow' ? d.rows.find((r) => r.approval !== undefined)?.name : undefined,
          want.approval,
        );
      }),
      { numRuns: 5000 },
    );
  });

  it('the held-out case: an enforced conditional deny and an audit-mode one both hold, in either order', () => {
    for (const order of [
      [0, 1],
      [1, 0],
    ]) {
      const specs: RowSpec[] = [
        { wildcard: true, scoped: true, effect: 'allow', when: undefined, audit: false },
        { wildcard: true, scoped: true, effect: 'deny', when: 'args.q.contains("drop")', audit: false },
        { wildcard: true, scoped: true, effect: 'deny', when: 'args.q.contains("del")', audit: true },
      ];
      const rows = [
        specs[0] as RowSpec,
        specs[1 + (order[0] as number)] as RowSpec,
        specs[1 + (order[1] as number)] as RowSpec,
      ].map(rowOf);
      const enforcedName = rows.find((r) => r.effect === 'deny' && r.enforcement === undefined)?.name;
      const auditName = rows.find((r) => r.enforcement === 'audit')?.name;
      const got = implementation(exchange(rows, { q: 'drop del' }).ex);
      assert.equal(got.effect, 'deny');
      assert.equal(got.audit, false, 'the enforced row decides');
      assert.equal(got.deciding, enforcedName);
      assert.deepEqual(got.wouldDeny, [auditName], 'the audit row is still recorded');
      const alone = implementation(exchange(rows, { q: 'del' }).ex);
      assert.equal(alone.audit, true, 'the audit row alone only records');
    }
  });

  it('an audit-mode row never loosens enforcement: an exact audit deny does not lift a `*` deny, and a lone one grants nothing', () => {
    const wildcardDeny: RowSpec = { wildcard: true, scoped: true, effect: 'deny', when: undefined, audit: false };
    const wildcardAllow: RowSpec = { wildcard: true, scoped: true, effect: 'allow', when: undefined, audit: false };
    for (const when of [undefined, 'args.q.contains("del")']) {
      const exactAudit: RowSpec = { wildcard: false, scoped: false, effect: 'deny', when, audit: true };
      const lifted = implementation(exchange([wildcardDeny, exactAudit].map(rowOf), { q: 'del' }).ex);
      assert.deepEqual([lifted.effect, lifted.audit, lifted.reason], ['deny', false, 'wildcard_deny']);
      // A refusal the rows without conditions decide is final before any condition is read.
      if (when === undefined) assert.deepEqual(lifted.wouldDeny, ['row-1']);
      const lone = implementation(exchange([exactAudit].map(rowOf), { q: 'del' }).ex);
      assert.deepEqual([lone.effect, lone.audit, lone.reason], ['deny', false, 'no_grant']);
      const rollout = implementation(exchange([wildcardAllow, exactAudit].map(rowOf), { q: 'del' }).ex);
      assert.deepEqual([rollout.effect, rollout.audit], ['deny', true], 'over an allow, the audit row only records');
    }
  });
});
