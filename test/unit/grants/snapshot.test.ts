import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { normalizeRow } from '../../../src/config/policy/grant-row.ts';
import {
  decide,
  parseSnapshot,
  rowsDigest,
  snapshotFor,
  snapshotMatches,
  toStored,
  validateSnapshot,
} from '../../../src/grants/snapshot.ts';
import { MAX_SNAPSHOT_ROWS } from '../../../src/grants/types.ts';
import type { GrantRow } from '../../../src/config/policy/grant-row.ts';

function rows(n: number, principal = 'alice'): GrantRow[] {
  return Array.from(
    { length: n },
    (_, i) => normalizeRow({ principal, tool: `tool_${i}`, effect: 'allow' }) as GrantRow,
  );
}

const alice = { id: 'alice', scopes: ['files.read'] };

test('snapshot holds only the rows applicable to the principal', () => {
  const all = [
    { principal: 'alice', tool: 'a', effect: 'allow', scopes: [] },
    { principal: 'bob', tool: 'a', effect: 'allow', scopes: [] },
    { principal: '*', tool: 'b', effect: 'allow', scopes: ['files.read'] },
    { principal: '*', tool: 'c', effect: 'allow', scopes: ['files.write'] },
  ].map((r) => normalizeRow(r) as GrantRow);
  const s = snapshotFor(all, alice, 12);
  assert.ok(s.ok);
  assert.equal(s.snapshot.revision, 12);
  assert.equal(s.snapshot.principal, 'alice');
  assert.deepEqual(s.snapshot.rows.map((r) => `${r.principal}/${r.tool}`).sort(), ['*/b', 'alice/a']);
  assert.ok(Object.isFrozen(s.snapshot) && Object.isFrozen(s.snapshot.rows));
});

test(`bound: ${MAX_SNAPSHOT_ROWS} rows are accepted, one more fails closed`, () => {
  const ok = snapshotFor(rows(MAX_SNAPSHOT_ROWS), alice, 1);
  assert.ok(ok.ok);
  assert.equal(ok.snapshot.rows.length, MAX_SNAPSHOT_ROWS);
  assert.equal(decide(ok.snapshot, `tool_${MAX_SNAPSHOT_ROWS - 1}`).effect, 'allow');
  assert.deepEqual(snapshotFor(rows(MAX_SNAPSHOT_ROWS + 1), alice, 1), { ok: false, code: 'grants_unavailable' });
});

test('bound counts applicable rows: other principals rows do not count', () => {
  const s = snapshotFor([...rows(MAX_SNAPSHOT_ROWS), ...rows(10, 'bob')], alice, 1);
  assert.ok(s.ok);
});

test('bound counts distinct rows: identical duplicates combine', () => {
  const s = snapshotFor([...rows(MAX_SNAPSHOT_ROWS), ...rows(10)], alice, 1);
  assert.ok(s.ok);
  assert.equal(s.snapshot.rows.length, MAX_SNAPSHOT_ROWS);
});

test('stored bound: 4,097 rows read back fail closed', () => {
  const stored = { principal: 'alice', scopes: [], revision: 1, rows: rows(MAX_SNAPSHOT_ROWS + 1) };
  assert.equal(validateSnapshot(stored).ok, false);
  assert.equal(validateSnapshot({ ...stored, rows: rows(MAX_SNAPSHOT_ROWS) }).ok, true);
});

test('snapshotFor fails closed on a bad revision, subject or row', () => {
  const good = rows(1);
  for (const revision of [-1, 1.5, Number.NaN, 2 ** 53]) {
    assert.equal(snapshotFor(good, alice, revision).ok, false, String(revision));
  }
  assert.equal(snapshotFor(good, { id: '*', scopes: [] }, 1).ok, false);
  assert.equal(snapshotFor(good, { id: '', scopes: [] }, 1).ok, false);
  const malformed = { principal: 'alice', tool: 'x', effect: 'perhaps', scopes: [] } as unknown as GrantRow;
  assert.equal(snapshotFor([...good, malformed], alice, 1).ok, false);
});

test('round trip: stored JSON text parses back to the same decisions and digest', () => {
  const all = [
    ...rows(3),
    normalizeRow({ principal: '*', tool: 'tool_0', effect: 'deny', scopes: ['files.read'], revision: 4 }) as GrantRow,
  ];
  const s = snapshotFor(all, alice, 9);
  assert.ok(s.ok);
  const back = parseSnapshot(JSON.stringify(toStored(s.snapshot)));
  assert.ok(back.ok);
  assert.equal(back.snapshot.digest, s.snapshot.digest);
  assert.equal(back.snapshot.revision, 9);
  assert.deepEqual(decide(back.snapshot, 'tool_0'), decide(s.snapshot, 'tool_0'));
  assert.equal(decide(back.snapshot, 'tool_0').reason, 'exact_allow');
  assert.equal(decide(back.snapshot, 'tool_1').reason, 'exact_allow');
});

const goodStored = {
  principal: 'alice',
  scopes: ['files.read'],
  revision: 3,
  rows: [{ principal: 'alice', tool: 't', effect: 'allow', scopes: [] }],
};

const malformed: [string, unknown][] = [
  ['null', null],
  ['an array', [goodStored]],
  ['a string', 'snapshot'],
  ['missing principal', { ...goodStored, principal: undefined }],
  ['missing rows', { principal: 'alice', scopes: [], revision: 3 }],
  ['missing revision', { principal: 'alice', scopes: [], rows: [] }],
  ['missing scopes', { principal: 'alice', revision: 3, rows: [] }],
  ['revision as string', { ...goodStored, revision: '3' }],
  ['negative revision', { ...goodStored, revision: -3 }],
  ['rows as object', { ...goodStored, rows: {} }],
  ['scopes as string', { ...goodStored, scopes: 'files.read' }],
  ['wildcard principal', { ...goodStored, principal: '*' }],
  ['unknown top-level field', { ...goodStored, extra: 1 }],
  [
    'row with wrong effect type',
    { ...goodStored, rows: [{ principal: 'alice', tool: 't', effect: true, scopes: [] }] },
  ],
  ['row missing tool', { ...goodStored, rows: [{ principal: 'alice', effect: 'allow', scopes: [] }] }],
  ['row of another principal', { ...goodStored, rows: [{ principal: 'bob', tool: 't', effect: 'allow', scopes: [] }] }],
  [
    'wildcard row whose scopes the principal lacks',
    { ...goodStored, rows: [{ principal: '*', tool: 't', effect: 'allow', scopes: ['files.write'] }] },
  ],
  ['row that is null', { ...goodStored, rows: [null] }],
  ['digest that does not match', { ...goodStored, digest: '0'.repeat(64) }],
  ['digest of wrong type', { ...goodStored, digest: 5 }],
];

for (const [name, value] of malformed) {
  test(`validateSnapshot fails closed: ${name}`, () => {
    assert.deepEqual(validateSnapshot(value), { ok: false, code: 'grants_unavailable' });
  });
}

test('validateSnapshot accepts the good stored form', () => {
  assert.equal(validateSnapshot(goodStored).ok, true);
});

for (const text of ['', '{', 'not json', '{"principal":"alice",}', '[1,2', 'null', '42']) {
  test(`parseSnapshot fails closed on text ${JSON.stringify(text)}`, () => {
    assert.deepEqual(parseSnapshot(text), { ok: false, code: 'grants_unavailable' });
  });
}

test('digest: order-independent, content-sensitive, equal to rowsDigest', () => {
  const a = rows(5);
  const s1 = snapshotFor(a, alice, 1);
  const s2 = snapshotFor([...a].reverse(), alice, 2);
  assert.ok(s1.ok && s2.ok);
  assert.equal(s1.snapshot.digest, s2.snapshot.digest);
  assert.match(s1.snapshot.digest, /^[0-9a-f]{64}$/);
  assert.equal(rowsDigest(a), s1.snapshot.digest);
  const changed = [...a.slice(1), normalizeRow({ principal: 'alice', tool: 'tool_0', effect: 'deny' }) as GrantRow];
  assert.notEqual(rowsDigest(changed), s1.snapshot.digest);
  const withRevision = [
    ...a.slice(1),
    normalizeRow({ principal: 'alice', tool: 'tool_0', effect: 'allow', revision: 2 }) as GrantRow,
  ];
  assert.notEqual(rowsDigest(withRevision), s1.snapshot.digest);
});

test('snapshotMatches binds principal id and scope set', () => {
  const s = snapshotFor(rows(1), { id: 'alice', scopes: new Set(['b', 'a']) }, 1);
  assert.ok(s.ok);
  assert.equal(snapshotMatches(s.snapshot, { id: 'alice', scopes: ['a', 'b'] }), true);
  assert.equal(snapshotMatches(s.snapshot, { id: 'alice', scopes: ['a'] }), false);
  assert.equal(snapshotMatches(s.snapshot, { id: 'alice', scopes: ['a', 'b', 'c'] }), false);
  assert.equal(snapshotMatches(s.snapshot, { id: 'bob', scopes: ['a', 'b'] }), false);
});

test('rows in force (a frozen array): principals the same rows apply to share one set of rows and decisions', () => {
  const inForce = Object.freeze(
    [
      { principal: '*', tool: 'a', effect: 'allow', scopes: ['files.read'] },
      { principal: '*', tool: 'b', effect: 'deny', scopes: ['files.write'] },
      { principal: 'alice', tool: 'c', effect: 'allow' },
    ].map((r) => normalizeRow(r) as GrantRow),
  );
  const snap = (id: string, scopes: string[]) => {
    const s = snapshotFor(inForce, { id, scopes }, 7);
    assert.ok(s.ok);
    return s.snapshot;
  };
  const carol = snap('carol', ['files.read']);
  const erin = snap('erin', ['files.read', 'unrelated']);
  assert.equal(carol.principal, 'carol');
  assert.equal(erin.principal, 'erin');
  assert.deepEqual(erin.scopes, ['files.read', 'unrelated']);
  assert.equal(carol.rows, erin.rows);
  assert.equal(carol.decisions, erin.decisions);
  assert.equal(carol.digest, erin.digest);
  // Other rows apply: their own parts, as from any array.
  const reader = snap('alice', ['files.read']);
  const writer = snap('frank', ['files.read', 'files.write']);
  assert.notEqual(reader.rows, carol.rows);
  assert.notEqual(writer.rows, carol.rows);
  assert.equal(decide(reader, 'c').effect, 'allow');
  assert.equal(decide(writer, 'b').effect, 'deny');
  assert.equal(decide(carol, 'c').effect, 'deny');
});

test('rows in force (a frozen array): every snapshot equals the one computed from a fresh copy of the rows', () => {
  const rowSpec = fc
    .record({
      principal: fc.constantFrom('*', 'alice', 'bob'),
      tool: fc.constantFrom('a', 'b', 'c'),
      effect: fc.constantFrom('allow', 'deny', 'allow', 'maybe'),
      scopes: fc.subarray(['x', 'y', 'z']),
      name: fc.option(fc.constantFrom('r1', 'r2'), { nil: undefined }),
    })
    // oxlint-disable-next-line no-map-spread -- fast-check's map: generated values are shared with shrinking and must not be edited in place
    .map(({ name, ...r }) => ({
      ...r,
      ...(name === undefined ? {} : { name }),
      ...(r.principal === '*' ? {} : { scopes: [] }),
    }));
  const subjectSpec = fc.record({
    id: fc.constantFrom('alice', 'bob', 'carol'),
    scopes: fc.subarray(['x', 'y', 'z', 'w']),
  });
  fc.assert(
    fc.property(
      fc.array(rowSpec, { maxLength: 8 }),
      fc.array(subjectSpec, { minLength: 1, maxLength: 6 }),
      (specs, subjects) => {
        const inForce = Object.freeze(specs) as unknown as readonly GrantRow[];
        for (const subject of subjects) {
          assert.deepEqual(snapshotFor(inForce, subject, 3), snapshotFor([...inForce], subject, 3));
        }
      },
    ),
    { seed: 38, numRuns: 300 },
  );
});
