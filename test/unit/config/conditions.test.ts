import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  compileCondition,
  conditionBindings,
  MAX_CONDITION_LENGTH,
  type ConditionInput,
} from '../../../src/config/policy/conditions.ts';
import { parsePolicy } from '../../../src/config/policy/policy.ts';

const input = (args: unknown, claims: Record<string, unknown> = {}): ConditionInput => ({
  principal: { id: 'alice', scopes: ['b', 'a'], credentialStrength: 'short_lived', claims },
  tool: { name: 'refund', metadata: { tier: 'base', requiredScopes: [] }, annotations: { readOnlyHint: false } },
  args,
  request: { protocolVersion: '2025-11-25', timeMs: Date.UTC(2026, 0, 2) },
});

function evaluate(source: string, args: unknown, claims?: Record<string, unknown>): boolean | undefined {
  const c = compileCondition(source);
  assert.ok(c.ok, c.ok ? '' : c.message);
  return c.condition.evaluate(conditionBindings(input(args, claims)));
}

function compileError(source: string): string {
  const c = compileCondition(source);
  assert.ok(!c.ok, `${source} compiled`);
  return `${c.message} @${c.line}:${c.column}`;
}

describe('grant conditions: evaluation', () => {
  it('reads every declared variable', () => {
    assert.equal(evaluate('args.amount <= 100', { amount: 100 }), true);
    assert.equal(evaluate('args.amount <= 100', { amount: 100.5 }), false);
    assert.equal(evaluate('args.count + 1 == 3', { count: 2 }), true, 'whole numbers are ints');
    assert.equal(evaluate('args.to.endsWith("@example.com")', { to: 'a@example.com' }), true);
    assert.equal(evaluate('args.to.endsWith("@example.com")', { to: 'a@example.com.evil' }), false);
    assert.equal(
      evaluate('principal.id == "alice" && principal.strength == "short_lived" && principal.scopes == ["a", "b"]', {}),
      true,
    );
    assert.equal(evaluate('principal.claims.dept == "finance"', {}, { dept: 'finance' }), true);
    assert.equal(
      evaluate('tool.name == "refund" && tool.metadata.tier == "base" && tool.annotations.readOnlyHint == false', {}),
      true,
    );
    assert.equal(
      evaluate('request.protocolVersion == "2025-11-25" && request.time < timestamp("2026-01-03T00:00:00Z")', {}),
      true,
    );
    assert.equal(evaluate('args.items.all(i, i.qty < 10)', { items: [{ qty: 1 }, { qty: 9 }] }), true);
    assert.equal(evaluate('has(args.note) ? args.note.size() < 5 : true', {}), true);
  });

  it('an evaluation error is undefined (which denies), never true', () => {
    assert.equal(evaluate('args.amount <= 100', {}), undefined, 'missing field');
    assert.equal(evaluate('args.target.startsWith("replica")', { target: 42 }), undefined, 'wrong type at run time');
    assert.equal(evaluate('args.n / 0 == 1', { n: 1 }), undefined, 'division by zero');
    assert.equal(evaluate('args.x', { x: 'yes' }), undefined, 'a dyn result that is not a bool');
  });

  it('a condition that iterates refuses collections over the iteration bound', () => {
    const many = Array.from({ length: 1001 }, () => 1);
    assert.equal(evaluate('args.xs.all(x, x == 1)', { xs: many }), undefined);
    assert.equal(evaluate('size(args.xs) > 0', { xs: many }), true, 'a condition that does not iterate still runs');
  });
});

describe('grant conditions: compile-time checks', () => {
  it('reports syntax errors with their position', () => {
    assert.equal(compileError('args.amount <='), "syntax error near '<' @1:13");
    assert.equal(compileError('args.a == 1 &&\n  args.b ==='), "syntax error near '=' @2:10");
  });

  it('type checks against the declared variables and the library overloads', () => {
    assert.equal(
      compileError('principal.nme == "x"'),
      "'principal' has no field 'nme' (it has id, scopes, strength, claims) @1:10",
    );
    assert.equal(compileError('user.id == "x"'), "undeclared reference to 'user' @1:1");
    assert.equal(
      compileError('principal.id + 1 == "x1"'),
      "no matching overload for '+' applied to (string, int) @1:14",
    );
    assert.equal(compileError('nosuch(args.a)'), "undeclared function 'nosuch' @1:1");
    assert.equal(compileError('principal.id.size() && true'), "'&&' needs bool operands, got int @1:13");
    assert.equal(compileError('principal.id'), 'a condition must be a bool, this one is string @1:10');
    assert.equal(compileError('principal.scopes["x"] == "a"'), 'a list index must be an int, got string @1:18');
  });

  it('bounds size and cost', () => {
    assert.match(compileError(`args.a == "${'x'.repeat(MAX_CONDITION_LENGTH)}"`), /longer than 2048 characters/);
    assert.match(compileError('args.xs.exists(x, args.ys.exists(y, x == y))'), /estimated cost \d+ is over the limit/);
    assert.match(
      compileError(Array.from({ length: 60 }, () => 'args.a<1').join('||')),
      /more than 256 expression nodes/,
    );
  });

  it('a policy with a bad condition is refused with the rule path and position', () => {
    const r = parsePolicy(
      'grants:\n  - { principal: "*", tool: t, effect: allow }\n  - { principal: "*", tool: t, effect: allow, when: "args.a >" }\n',
    );
    assert.ok(!r.ok);
    assert.deepEqual(r.errors, [
      { path: '/grants/1/when', message: "condition: syntax error near '>' at line 1, column 8" },
    ]);
  });

  it('rows keep their condition, enforcement and a name (their pointer unless given)', () => {
    const r = parsePolicy(
      'enforcement: audit\ntools:\n  t: { enforcement: enforce }\ngrants:\n  - { principal: "*", tool: t, effect: allow, when: "args.a == 1", enforcement: audit }\n  - { principal: "*", tool: u, effect: allow, name: u-all }\n',
    );
    assert.ok(r.ok);
    assert.equal(r.policy.enforcement, 'audit');
    assert.equal(r.policy.tools.t?.enforcement, 'enforce');
    assert.deepEqual(
      r.policy.grants.map((g) => [g.name, g.when, g.enforcement]),
      [
        ['/grants/0', 'args.a == 1', 'audit'],
        ['u-all', undefined, undefined],
      ],
    );
  });
});

describe('grant conditions: numbers and times are typed as CEL types them', () => {
  it('request.time is a timestamp: comparing it with a number, a string or taking its size is refused at load', () => {
    for (const bad of [
      'request.time > 5',
      'request.time == 5',
      'request.time != 5',
      'size(request.time) > 0',
      'request.time > "2020-01-01T00:00:00Z"',
      'request.time in [1, 2]',
    ]) {
      assert.match(compileError(bad), /no matching overload|compares values of one type/, bad);
    }
    assert.equal(evaluate('request.time > timestamp("2026-01-01T00:00:00Z")', {}), true);
    assert.equal(evaluate('request.time.getDayOfWeek() == 5', {}), true, '2026-01-02 was a Friday');
    assert.equal(evaluate('request.time - duration("24h") < timestamp("2026-01-01T00:00:01Z")', {}), true);
  });

  it('equality between two known, different types is refused, as it is for principal.id', () => {
    for (const bad of [
      'principal.id == 5',
      'principal.strength != 1',
      'request.protocolVersion == 1',
      '5 in principal.scopes',
    ]) {
      assert.match(compileError(bad), /compares values of one type/, bad);
    }
    assert.equal(evaluate('args.n == 1.0', { n: 1 }), true, 'int, uint and double compare across types');
    assert.equal(evaluate('principal.id == "alice"', {}), true);
    assert.equal(evaluate('args.n == "x"', { n: 'x' }), true, 'dyn operands are decided at run time');
  });

  it('an int literal beyond int64, or a uint literal beyond uint64, is a compile error', () => {
    for (const bad of [
      'args.n == 99999999999999999999',
      'args.n == 9223372036854775808',
      'args.n == -9223372036854775809',
      'args.n == 18446744073709551616u',
    ]) {
      assert.match(compileError(bad), /integer literal out of range/, bad);
    }
    assert.equal(evaluate('args.n == 9223372036854775807', { n: 9223372036854775807n }), true);
    assert.equal(evaluate('args.n == -9223372036854775808', { n: -9223372036854775808n }), true);
  });

  it('an integer read exactly compares exactly; one beyond int64 fails the condition rather than judge another number', () => {
    assert.equal(evaluate('args.account == 9007199254740993', { account: 9007199254740993n }), true);
    assert.equal(evaluate('args.account == 9007199254740993', { account: 9007199254740992 }), false);
    assert.equal(evaluate('args.amount <= 9007199254740992', { amount: 9007199254740993n }), false);
    assert.equal(evaluate('args.amount <= 9007199254740992', { amount: 9007199254740992 }), true);
    assert.equal(evaluate('args.q == "x"', { q: 'x', id: 99999999999999999999n }), undefined);
    assert.equal(
      evaluate('principal.id == "alice"', { id: 99999999999999999999n }),
      true,
      'a condition not reading args is unaffected',
    );
  });
});
