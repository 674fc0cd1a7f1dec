import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseExact, stringifyExact } from '../../../src/json/exact.ts';
import { findInexactInteger } from '../../../src/json/inexact-integers.ts';

describe('json/exact: integers as written', () => {
  it('reads an integer a double cannot hold as a bigint with its digits', () => {
    assert.deepEqual(parseExact('{"a":9007199254740993,"b":[-9007199254740993],"c":123456789012345678901234567890}'), {
      a: 9007199254740993n,
      b: [-9007199254740993n],
      c: 123456789012345678901234567890n,
    });
  });

  it('leaves every number a double holds exactly, and every fraction or exponent, as JSON.parse reads it', () => {
    const text =
      '{"safe":9007199254740991,"two53":9007199254740992,"big":18014398509481984,"f":1.5,"e":9.007199254740993e15,"neg":-0,"huge":1e400}';
    assert.deepEqual(parseExact(text), JSON.parse(text));
  });

  it('a literal beyond a double (Infinity to JSON.parse) keeps its digits', () => {
    const digits = '9'.repeat(400);
    assert.equal(parseExact(`[${digits}]`)?.toString(), digits);
  });

  it('writes a bigint back with all its digits, and pretty-prints', () => {
    assert.equal(stringifyExact({ a: 9007199254740993n, b: 1 }), '{"a":9007199254740993,"b":1}');
    assert.equal(stringifyExact({ a: 9007199254740993n }, 2), '{\n  "a": 9007199254740993\n}');
  });

  it('round-trips any integer literal exactly, and agrees with findInexactInteger on which ones need it', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (n) => {
        const text = `{"n":${n}}`;
        const read = parseExact(text) as { n: number | bigint };
        assert.equal(stringifyExact(read), text);
        assert.equal(typeof read.n === 'bigint', findInexactInteger(text, []) !== undefined);
      }),
      { numRuns: 2000 },
    );
  });
});
