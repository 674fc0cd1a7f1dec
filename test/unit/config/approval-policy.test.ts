import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalizeRow } from '../../../src/config/policy/grant-row.ts';
import { parsePolicy } from '../../../src/config/policy/policy.ts';
import { snapshotFor } from '../../../src/grants/snapshot.ts';
import { decideCall } from '../../../src/interceptors/conditions.ts';

const row = (extra: string) => `version: 1\ngrants:\n  - { principal: "*", tool: refund, scopes: [pay], ${extra} }\n`;

describe('require_approval rows', () => {
  it('are never absorbed by an allow row that is otherwise the same, in either file order', () => {
    const allow = '  - { principal: "*", tool: refund, scopes: [pay], effect: allow }\n';
    const ask =
      '  - { principal: "*", tool: refund, scopes: [pay], effect: require_approval, approval: { approverScope: pay.approve } }\n';
    for (const grants of [allow + ask, ask + allow]) {
      const r = parsePolicy(`version: 1\ngrants:\n${grants}`);
      assert.ok(r.ok);
      assert.equal(r.policy.grants.length, 2);
      const snap = snapshotFor([...r.policy.grants], { id: 'alice', scopes: ['pay'] }, 1);
      assert.ok(snap.ok);
      assert.equal(snap.snapshot.rows.length, 2);
      assert.ok(
        snap.snapshot.decisions.get('refund')?.rows[0]?.approval !== undefined,
        'the row asking for approval governs the call',
      );
    }
  });

  it('load as allow rows carrying the approval, expiresIn in seconds, selfApproval false by default', () => {
    const r = parsePolicy(row('effect: require_approval, approval: { approverScope: pay.approve, expiresIn: 2m }'));
    assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
    const g = r.policy.grants[0];
    assert.equal(g?.effect, 'allow');
    assert.deepEqual(g?.approval, { approverScope: 'pay.approve', expiresIn: 120, selfApproval: false });
    const byDefault = parsePolicy(row('effect: require_approval, approval: { approverScope: a }'));
    assert.ok(byDefault.ok);
    assert.equal(byDefault.policy.grants[0]?.approval?.expiresIn, 900);
  });

  it('refuse a require_approval row without approval, an approval on another row, and an expiresIn out of bounds', () => {
    for (const bad of [
      'effect: require_approval',
      'effect: allow, approval: { approverScope: a }',
      'effect: require_approval, approval: { approverScope: a, expiresIn: 5s }',
      'effect: require_approval, approval: { approverScope: a, expiresIn: 25h }',
      'effect: require_approval, approval: { approverScope: a, other: 1 }',
      'effect: require_approval, approval: { expiresIn: 1m }',
    ]) {
      const r = parsePolicy(row(bad));
      assert.equal(r.ok, false, bad);
    }
  });

  it('round-trip through storage in canonical form (effect allow with approval)', () => {
    const first = normalizeRow({
      principal: '*',
      tool: 'refund',
      scopes: ['pay'],
      effect: 'require_approval',
      approval: { approverScope: 'a', expiresIn: '1h' },
    });
    assert.ok(first !== undefined);
    assert.deepEqual(normalizeRow(JSON.parse(JSON.stringify(first))), first);
    assert.equal(
      normalizeRow({ principal: '*', tool: 'refund', effect: 'deny', approval: { approverScope: 'a' } }),
      undefined,
    );
  });

  it('win over a plain allow row when both hold (a conditional approval for large amounts)', () => {
    const r = parsePolicy(`version: 1
grants:
  - { principal: "*", tool: refund, scopes: [pay], effect: allow }
  - { principal: "*", tool: refund, scopes: [pay], effect: require_approval, when: 'args.amount > 100', approval: { approverScope: a } }
`);
    assert.ok(r.ok);
    const s = snapshotFor(r.policy.grants, { id: 'p', scopes: ['pay'] }, 1);
    assert.ok(s.ok);
    const decideFor = (amount: number) =>
      decideCall({
        message: { name: 'refund', params: { arguments: { amount } }, protocolVersion: '2025-06-18' },
        principal: { id: 'p', scopes: new Set(['pay']), credentialStrength: 'static' },
        policy: r.policy,
        snapshot: s.snapshot,
        catalogue: { get: () => undefined },
      } as never)?.decision;
    assert.ok(decideFor(150)?.rows[0]?.approval !== undefined);
    assert.equal(decideFor(50)?.rows[0]?.approval, undefined);
    assert.equal(decideFor(50)?.effect, 'allow');
  });
});
