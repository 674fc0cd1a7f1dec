import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyPatch } from './json-patch.ts';

describe('the RFC 6902 applier used to check injections', () => {
  it('adds, appends, replaces and escapes keys', () => {
    const out = applyPatch({ a: { 'x/y': 1 }, list: [1, 2] }, [
      { op: 'add', path: '/a/b~1c~0d', value: true },
      { op: 'add', path: '/list/-', value: 3 },
      { op: 'add', path: '/list/0', value: 0 },
      { op: 'replace', path: '/a/x~1y', value: 2 },
    ]);
    assert.deepEqual(out, { ok: true, doc: { a: { 'x/y': 2, 'b/c~d': true }, list: [0, 1, 2, 3] } });
  });
  it('refuses replace of a missing member and a path through a missing parent, leaving the input untouched', () => {
    const doc = { a: {} };
    assert.equal(applyPatch(doc, [{ op: 'replace', path: '/a/b', value: 1 }]).ok, false);
    assert.equal(applyPatch(doc, [{ op: 'add', path: '/x/y', value: 1 }]).ok, false);
    assert.equal(applyPatch(doc, [{ op: 'add', path: '/a/b', value: 1 }, { op: 'test', path: '/a/b', value: 2 }]).ok, false);
    assert.deepEqual(doc, { a: {} });
  });
});
