import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { decideMatching, decideRows, scopesThatWouldGrant } from '../../../src/grants/rules.ts';
import { normalizeRow } from '../../../src/config/policy/grant-row.ts';
import { decide, grantedTools, snapshotFor } from '../../../src/grants/snapshot.ts';
import type { DecisionReason, GrantSubject } from '../../../src/grants/types.ts';
import type { GrantEffect, GrantRow } from '../../../src/config/policy/grant-row.ts';

function row(principal: string, tool: string, effect: GrantEffect, scopes: string[] = []): GrantRow {
  const r = normalizeRow({ principal, tool, effect, scopes });
  assert.ok(r, `test row ${principal}/${tool} must be valid`);
  return r;
}

function decideFor(rows: GrantRow[], subject: GrantSubject, tool: string) {
  const s = snapshotFor(rows, subject, 7);
  assert.ok(s.ok);
  return decide(s.snapshot, tool);
}

const ALL_SCOPES = ['admin', 'files.read', 'files.write', 'mail.send', 'weather.read'];

interface Case {
  name: string;
  rows: GrantRow[];
  subject: GrantSubject;
  tool: string;
  effect: GrantEffect;
  reason: DecisionReason;
}

const cases: Case[] = [
  {
    name: 'no rows at all: denied',
    rows: [],
    subject: { id: 'alice', scopes: ALL_SCOPES },
    tool: 'read_file',
    effect: 'deny',
    reason: 'no_grant',
  },
  {
    name: 'rows for other tools only: denied',
    rows: [row('alice', 'write_file', 'allow'), row('*', 'list_files', 'allow')],
    subject: { id: 'alice', scopes: [] },
    tool: 'read_file',
    effect: 'deny',
    reason: 'no_grant',
  },
  {
    name: 'exact allow',
    rows: [row('alice', 'read_file', 'allow')],
    subject: { id: 'alice', scopes: [] },
    tool: 'read_file',
    effect: 'allow',
    reason: 'exact_allow',
  },
  {
    name: 'exact allow for another principal does not apply',
    rows: [row('bob', 'read_file', 'allow')],
    subject: { id: 'alice', scopes: [] },
    tool: 'read_file',
    effect: 'deny',
    reason: 'no_grant',
  },
  {
    name: 'principal ids are exact: no prefix or case folding',
    rows: [row('Alice', 'read_file', 'allow'), row('alic', 'read_file', 'allow')],
    subject: { id: 'alice', scopes: [] },
    tool: 'read_file',
    effect: 'deny',
    reason: 'no_grant',
  },
  {
    name: 'tool names are exact: no prefix or case folding',
    rows: [row('alice', 'read_file', 'allow')],
    subject: { id: 'alice', scopes: [] },
    tool: 'Read_File',
    effect: 'deny',
    reason: 'no_grant',
  },
  {
    name: 'exact deny',
    rows: [row('alice', 'read_file', 'deny')],
    subject: { id: 'alice', scopes: [] },
    tool: 'read_file',
    effect: 'deny',
    reason: 'exact_deny',
  },
  {
    name: 'wildcard allow without scopes applies to everyone',
    rows: [row('*', 'read_file', 'allow')],
    subject: { id: 'alice', scopes: [] },
    tool: 'read_file',
    effect: 'allow',
    reason: 'wildcard_allow',
  },
  {
    name: 'wildcard allow when holding all its scopes',
    rows: [row('*', 'write_file', 'allow', ['files.read', 'files.write'])],
    subject: { id: 'alice', scopes: ['files.read', 'files.write', 'mail.send'] },
    tool: 'write_file',
    effect: 'allow',
    reason: 'wildcard_allow',
  },
  {
    name: 'wildcard allow needs ALL its scopes, not some',
    rows: [row('*', 'write_file', 'allow', ['files.read', 'files.write'])],
    subject: { id: 'alice', scopes: ['files.write'] },
    tool: 'write_file',
    effect: 'deny',
    reason: 'no_grant',
  },
  {
    name: 'scope matching is exact (no prefix, no hierarchy)',
    rows: [row('*', 'read_file', 'allow', ['files.read'])],
    subject: { id: 'alice', scopes: ['files', 'files.read.all', 'FILES.READ'] },
    tool: 'read_file',
    effect: 'deny',
    reason: 'no_grant',
  },
  {
    name: 'wildcard deny applies to principals holding its scopes',
    rows: [row('*', 'send_mail', 'allow'), row('*', 'send_mail', 'deny', ['contractor'])],
    subject: { id: 'alice', scopes: ['contractor'] },
    tool: 'send_mail',
    effect: 'deny',
    reason: 'wildcard_deny',
  },
  {
    name: 'wildcard deny does not apply without its scopes',
    rows: [row('*', 'send_mail', 'allow'), row('*', 'send_mail', 'deny', ['contractor'])],
    subject: { id: 'alice', scopes: [] },
    tool: 'send_mail',
    effect: 'allow',
    reason: 'wildcard_allow',
  },
  {
    name: 'wildcard: deny wins over allow at the same level',
    rows: [row('*', 'read_file', 'allow'), row('*', 'read_file', 'deny')],
    subject: { id: 'alice', scopes: ALL_SCOPES },
    tool: 'read_file',
    effect: 'deny',
    reason: 'wildcard_deny',
  },
  {
    name: 'exact: deny wins over allow for the same principal and tool',
    rows: [row('alice', 'read_file', 'allow'), row('alice', 'read_file', 'deny')],
    subject: { id: 'alice', scopes: [] },
    tool: 'read_file',
    effect: 'deny',
    reason: 'exact_deny',
  },
  {
    name: 'exact deny overrides wildcard allow',
    rows: [row('*', 'read_file', 'allow'), row('alice', 'read_file', 'deny')],
    subject: { id: 'alice', scopes: [] },
    tool: 'read_file',
    effect: 'deny',
    reason: 'exact_deny',
  },
  {
    name: 'exact allow overrides wildcard deny',
    rows: [row('*', 'read_file', 'deny'), row('alice', 'read_file', 'allow')],
    subject: { id: 'alice', scopes: [] },
    tool: 'read_file',
    effect: 'allow',
    reason: 'exact_allow',
  },
  {
    name: 'exact allow overrides a scoped wildcard deny the principal triggers',
    rows: [row('*', 'read_file', 'deny', ['contractor']), row('alice', 'read_file', 'allow')],
    subject: { id: 'alice', scopes: ['contractor'] },
    tool: 'read_file',
    effect: 'allow',
    reason: 'exact_allow',
  },
  {
    name: 'exact deny overrides wildcard allow for the named principal only',
    rows: [row('*', 'read_file', 'allow'), row('alice', 'read_file', 'deny')],
    subject: { id: 'bob', scopes: [] },
    tool: 'read_file',
    effect: 'allow',
    reason: 'wildcard_allow',
  },
  {
    name: 'administrator holding every scope: explicit exact deny still denies',
    rows: [row('*', 'drop_table', 'allow', ['admin']), row('root', 'drop_table', 'deny')],
    subject: { id: 'root', scopes: ALL_SCOPES },
    tool: 'drop_table',
    effect: 'deny',
    reason: 'exact_deny',
  },
  {
    name: 'administrator holding every scope: explicit wildcard deny still denies',
    rows: [row('*', 'drop_table', 'allow', ['admin']), row('*', 'drop_table', 'deny')],
    subject: { id: 'root', scopes: ALL_SCOPES },
    tool: 'drop_table',
    effect: 'deny',
    reason: 'wildcard_deny',
  },
  {
    name: 'administrator: more scopes bring scoped denies into force, never lift them',
    rows: [row('*', 'drop_table', 'allow', ['admin']), row('*', 'drop_table', 'deny', ['mail.send'])],
    subject: { id: 'root', scopes: ALL_SCOPES },
    tool: 'drop_table',
    effect: 'deny',
    reason: 'wildcard_deny',
  },
  {
    name: 'administrator: no grant for a tool is still no grant',
    rows: [row('*', 'drop_table', 'allow', ['admin'])],
    subject: { id: 'root', scopes: ALL_SCOPES },
    tool: 'truncate_table',
    effect: 'deny',
    reason: 'no_grant',
  },
  {
    name: 'several wildcard allows: any one fully held suffices',
    rows: [row('*', 'read_file', 'allow', ['files.read']), row('*', 'read_file', 'allow', ['admin'])],
    subject: { id: 'alice', scopes: ['admin'] },
    tool: 'read_file',
    effect: 'allow',
    reason: 'wildcard_allow',
  },
];

for (const c of cases) {
  test(`decide: ${c.name}`, () => {
    const d = decideFor(c.rows, c.subject, c.tool);
    assert.equal(d.effect, c.effect);
    assert.equal(d.reason, c.reason);
    if (c.reason === 'no_grant') assert.equal(d.rows.length, 0);
    else assert.ok(d.rows.length > 0 && d.rows.every((r) => r.tool === c.tool && r.effect === c.effect));
  });
}

test('decide: the same rows give the same decision in any order', () => {
  const rows = [
    row('*', 'a', 'allow'),
    row('alice', 'a', 'deny'),
    row('*', 'b', 'deny', ['x']),
    row('*', 'b', 'allow'),
  ];
  const forward = snapshotFor(rows, { id: 'alice', scopes: ['x'] }, 1);
  const backward = snapshotFor([...rows].reverse(), { id: 'alice', scopes: ['x'] }, 1);
  assert.ok(forward.ok && backward.ok);
  for (const tool of ['a', 'b', 'c']) assert.deepEqual(decide(forward.snapshot, tool), decide(backward.snapshot, tool));
  assert.equal(forward.snapshot.digest, backward.snapshot.digest);
});

test('grantedTools keeps input order and only allowed names', () => {
  const rows = [row('*', 'b', 'allow'), row('*', 'a', 'allow'), row('alice', 'c', 'deny'), row('*', 'c', 'allow')];
  const s = snapshotFor(rows, { id: 'alice', scopes: [] }, 1);
  assert.ok(s.ok);
  assert.deepEqual(grantedTools(s.snapshot, ['c', 'a', 'd', 'b']), ['a', 'b']);
});

interface ScopeCase {
  name: string;
  rows: GrantRow[];
  subject: GrantSubject;
  tool: string;
  want: string[] | undefined;
}

const scopeCases: ScopeCase[] = [
  {
    name: 'wildcard allow lacking one scope: returns the row scopes',
    rows: [row('*', 'write_file', 'allow', ['files.read', 'files.write'])],
    subject: { id: 'alice', scopes: ['files.read'] },
    tool: 'write_file',
    want: ['files.read', 'files.write'],
  },
  {
    name: 'already allowed: nothing to request',
    rows: [row('*', 'write_file', 'allow', ['files.write'])],
    subject: { id: 'alice', scopes: ['files.write'] },
    tool: 'write_file',
    want: undefined,
  },
  {
    name: 'exact deny for the principal: scopes cannot help',
    rows: [row('*', 'write_file', 'allow', ['files.write']), row('alice', 'write_file', 'deny')],
    subject: { id: 'alice', scopes: [] },
    tool: 'write_file',
    want: undefined,
  },
  {
    name: 'exact deny for another principal does not matter',
    rows: [row('*', 'write_file', 'allow', ['files.write']), row('bob', 'write_file', 'deny')],
    subject: { id: 'alice', scopes: [] },
    tool: 'write_file',
    want: ['files.write'],
  },
  {
    name: 'a wildcard deny already in force: scopes cannot help',
    rows: [row('*', 'write_file', 'allow', ['files.write']), row('*', 'write_file', 'deny')],
    subject: { id: 'alice', scopes: [] },
    tool: 'write_file',
    want: undefined,
  },
  {
    name: 'a scoped deny the requested scopes would trigger: that row is not offered',
    rows: [row('*', 'write_file', 'allow', ['files.write']), row('*', 'write_file', 'deny', ['files.write'])],
    subject: { id: 'alice', scopes: [] },
    tool: 'write_file',
    want: undefined,
  },
  {
    name: 'no allow row at all',
    rows: [row('*', 'other', 'allow', ['x'])],
    subject: { id: 'alice', scopes: [] },
    tool: 'write_file',
    want: undefined,
  },
  {
    name: 'several candidates: fewest new scopes wins',
    rows: [row('*', 't', 'allow', ['a', 'b', 'c']), row('*', 't', 'allow', ['z'])],
    subject: { id: 'alice', scopes: ['a', 'b'] },
    tool: 't',
    want: ['a', 'b', 'c'],
  },
  {
    name: 'several candidates with equal need: lexically first',
    rows: [row('*', 't', 'allow', ['y']), row('*', 't', 'allow', ['x'])],
    subject: { id: 'alice', scopes: [] },
    tool: 't',
    want: ['x'],
  },
];

for (const c of scopeCases) {
  test(`scopesThatWouldGrant: ${c.name}`, () => {
    assert.deepEqual(scopesThatWouldGrant(c.rows, c.subject, c.tool), c.want);
  });
}

test('scopesThatWouldGrant: the returned scopes really grant', () => {
  const rows = [
    row('*', 'write_file', 'allow', ['files.read', 'files.write']),
    row('*', 'write_file', 'deny', ['guest']),
  ];
  const subject = { id: 'alice', scopes: ['files.read'] };
  const want = scopesThatWouldGrant(rows, subject, 'write_file');
  assert.ok(want);
  assert.equal(decideFor(rows, subject, 'write_file').effect, 'deny');
  assert.equal(decideFor(rows, { id: 'alice', scopes: [...subject.scopes, ...want] }, 'write_file').effect, 'allow');
});

test('normalizeRow: canonical form and rejections', () => {
  assert.deepEqual(normalizeRow({ principal: '*', tool: 't', effect: 'allow', scopes: ['b', 'a', 'b'] }), {
    principal: '*',
    tool: 't',
    effect: 'allow',
    scopes: ['a', 'b'],
  });
  assert.deepEqual(normalizeRow({ principal: 'p', tool: 't', effect: 'deny', revision: 3 }), {
    principal: 'p',
    tool: 't',
    effect: 'deny',
    scopes: [],
    revision: 3,
  });
  const bad: unknown[] = [
    null,
    'row',
    [],
    {},
    { principal: 'p', tool: 't', effect: 'maybe' },
    { principal: 'p', tool: '*', effect: 'allow' },
    { principal: '', tool: 't', effect: 'allow' },
    { principal: 'p\n', tool: 't', effect: 'allow' },
    { principal: 'p', tool: 'two words', effect: 'allow' },
    { principal: 'p', tool: 't', effect: 'allow', scopes: 'a' },
    { principal: 'p', tool: 't', effect: 'allow', scopes: ['a'] },
    { principal: '*', tool: 't', effect: 'allow', scopes: ['a b'] },
    { principal: '*', tool: 't', effect: 'allow', scopes: ['"'] },
    { principal: 'p', tool: 't', effect: 'allow', revision: -1 },
    { principal: 'p', tool: 't', effect: 'allow', revision: 1.5 },
    { principal: 'p', tool: 't', effect: 'allow', extra: true },
    { principal: '*', tool: 't', effect: 'allow', scopes: Array.from({ length: 65 }, (_, i) => `s${i}`) },
  ];
  for (const b of bad) assert.equal(normalizeRow(b), undefined, JSON.stringify(b));
});

describe('conditional rows and shadow mode', () => {
  const wild = (r: Record<string, unknown>) =>
    normalizeRow({ principal: '*', tool: 't', effect: 'allow', ...r }) as GrantRow;

  it('a row with a condition that does not compile is malformed wherever it comes from', () => {
    assert.equal(normalizeRow({ principal: '*', tool: 't', effect: 'allow', when: 'args.a <' }), undefined);
    assert.equal(normalizeRow({ principal: '*', tool: 't', effect: 'allow', enforcement: 'maybe' }), undefined);
    assert.equal(wild({ when: 'args.a == 1' }).when, 'args.a == 1');
  });

  it('takes conditional rows at their best case and marks the decision pending', () => {
    const allow = wild({ when: 'args.a == 1' });
    assert.deepEqual(decideRows([allow]), { effect: 'allow', reason: 'wildcard_allow', rows: [allow], pending: true });
    const deny = wild({ effect: 'deny', when: 'args.a == 1' });
    const plain = wild({});
    assert.equal(decideRows([plain, deny]).effect, 'allow', 'a conditional deny may not hold');
    assert.equal(decideRows([plain, deny]).pending, true);
    const hard = wild({ effect: 'deny' });
    assert.equal(decideRows([allow, hard]).effect, 'deny', 'an unconditional deny is final');
    assert.equal(decideRows([allow, hard]).pending, undefined);
  });

  it('an exact conditional row that does not hold leaves the wildcard rows to decide', () => {
    const exact = normalizeRow({ principal: 'alice', tool: 't', effect: 'deny', when: 'args.a == 1' }) as GrantRow;
    const wildcard = wild({});
    assert.equal(decideMatching([wildcard], [exact, wildcard]).reason, 'wildcard_allow');
    assert.equal(decideMatching([exact, wildcard], [exact, wildcard]).reason, 'exact_deny');
  });

  it('a refusal is shadowed only when its deciding rows (or, with no match, a candidate) are in audit mode', () => {
    const auditAllow = wild({ when: 'args.a == 1', enforcement: 'audit' });
    assert.equal(decideMatching([], [auditAllow]).audit, true);
    assert.equal(decideMatching([], [wild({ when: 'args.a == 1' })]).audit, undefined);
    const auditDeny = wild({ effect: 'deny', enforcement: 'audit' });
    const enforcedDeny = wild({ effect: 'deny', name: 'hard' });
    const allow = wild({});
    assert.equal(decideMatching([auditDeny, allow], [auditDeny, allow]).audit, true);
    const mixed = decideMatching([auditDeny, enforcedDeny], [auditDeny, enforcedDeny]);
    assert.equal(mixed.audit, undefined);
    assert.deepEqual(mixed.rows, [enforcedDeny], 'the enforced row decides and is named, whatever the order');
    assert.deepEqual(mixed.wouldDeny, [auditDeny], 'the audit row is still recorded');
    assert.deepEqual(decideMatching([enforcedDeny, auditDeny], [enforcedDeny, auditDeny]).rows, [enforcedDeny]);
  });

  it('an audit-mode deny never loosens enforcement: alone it grants nothing, and an exact one does not lift a `*` deny', () => {
    const auditDeny = wild({ effect: 'deny', enforcement: 'audit' });
    const lone = decideMatching([auditDeny], [auditDeny]);
    assert.deepEqual(
      [lone.effect, lone.reason, lone.audit, lone.wouldDeny],
      ['deny', 'no_grant', undefined, [auditDeny]],
    );
    const exactAudit = row('alice', 'read_file', 'deny');
    const shadowRow = { ...exactAudit, enforcement: 'audit' as const };
    const wildDeny = wild({ effect: 'deny', name: 'hard' });
    const d = decideMatching([shadowRow, wildDeny], [shadowRow, wildDeny]);
    assert.deepEqual(
      [d.effect, d.reason, d.audit, d.rows, d.wouldDeny],
      ['deny', 'wildcard_deny', undefined, [wildDeny], [shadowRow]],
    );
  });
});
