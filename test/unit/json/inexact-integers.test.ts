import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'node:test';
import { findInexactInteger, holdsUnsafeMagnitude } from '../../../src/json/inexact-integers.ts';
import { childPointer } from '../../../src/json/pointer.ts';

const ARGS = ['params', 'arguments'];
const call = (args: string) =>
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":${args}}}`;

/**
 * The reference answer, from the source text JSON.parse itself hands each
 * value (Node 24): pointers of every integer literal whose digits differ
 * from the double it became.
 */
function reference(text: string): string[] {
  const MARK = Symbol('inexact');
  const marked: unknown = JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) => {
    const source = context?.source;
    const integer = typeof value === 'number' && source !== undefined && /^-?\d+$/.test(source);
    return integer && (!Number.isFinite(value) || BigInt(value) !== BigInt(source)) ? MARK : value;
  });
  // The reviver cannot see paths; a walk of the marked copy finds them, in
  // document order as long as no member name looks like an array index.
  const found: string[] = [];
  const walk = (v: unknown, pointer: string): void => {
    if (v === MARK) found.push(pointer);
    else if (Array.isArray(v)) v.forEach((x, i) => walk(x, childPointer(pointer, i)));
    else if (typeof v === 'object' && v !== null)
      for (const [k, x] of Object.entries(v)) walk(x, childPointer(pointer, k));
  };
  walk(marked, '');
  return found;
}

describe('findInexactInteger', () => {
  it('finds integers a double cannot hold, at their pointer inside the arguments', () => {
    const cases: [string, string][] = [
      ['{"n":9007199254740993}', '/n'],
      ['{"n":-9007199254740993}', '/n'],
      ['{"a":[1,2,{"b":[0,12345678901234567891]}]}', '/a/2/b/1'],
      ['{"\\u0061":9007199254740993}', '/a'],
      ['{"a/b~c":9007199254740993}', '/a~1b~0c'],
      ['{"s":"9007199254740993","n":9007199254740995}', '/n'],
      [`{"n":1${'0'.repeat(400)}}`, '/n'],
      ['{ "n" : 9007199254740993 }', '/n'],
    ];
    for (const [args, pointer] of cases) assert.equal(findInexactInteger(call(args), ARGS), pointer, args);
    assert.equal(findInexactInteger(call('9007199254740993'), ARGS), '', 'the arguments themselves');
    assert.equal(findInexactInteger('[9007199254740993]', []), '/0');
  });

  it('leaves alone integers a double holds exactly, fractions, exponents and digits inside strings', () => {
    const exact = [
      '{"n":900719925474099}',
      '{"n":9007199254740991}',
      '{"n":9007199254740992}',
      '{"n":9007199254740994}',
      '{"n":-9007199254740992}',
      '{"n":1152921504606846976}',
      '{"n":9007199254740993.0}',
      '{"n":9007199254740993e0}',
      '{"n":90071992547409931E-1}',
      '{"s":"12345678901234567891","12345678901234567891":1}',
      '{"a":[{"b":"\\"9007199254740993"}]}',
    ];
    for (const args of exact) assert.equal(findInexactInteger(call(args), ARGS), undefined, args);
  });

  it('counts only literals under the given path', () => {
    const body =
      '{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"_meta":{"progressToken":9007199254740993},"name":"t","arguments":{"ok":1}}}';
    assert.equal(findInexactInteger(body, ARGS), undefined);
    const later =
      '{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"t","arguments":{"ok":1,"n":[9007199254740993]}}}';
    assert.equal(findInexactInteger(later, ARGS), '/n/0');
    assert.equal(
      findInexactInteger('{"params":[{"arguments":9007199254740993}]}', ARGS),
      undefined,
      'an array index never equals a member name',
    );
  });

  it('agrees with the source text JSON.parse reports, on seeded random documents', () => {
    let seed = 0x2545f491;
    const rnd = (n: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const digits = (k: number) => Array.from({ length: k }, (_, i) => String(i === 0 ? 1 + rnd(9) : rnd(10))).join('');
    const value = (depth: number): string => {
      const pick = rnd(depth > 3 ? 4 : 7);
      switch (pick) {
        case 0:
          return (rnd(2) ? '-' : '') + digits(1 + rnd(22));
        case 1:
          return `${digits(1 + rnd(18))}.${digits(1 + rnd(3))}`;
        case 2:
          return `"${rnd(2) ? digits(17) : 'k\\"\\u0041/~'}"`;
        case 3:
          return ['true', 'false', 'null'][rnd(3)] as string;
        case 4:
        case 5:
          return `[${Array.from({ length: rnd(4) }, () => value(depth + 1)).join(', ')}]`;
        default: {
          const names = ['a', 'b/c', 'd~e', '\\u0066', `k${rnd(100)}`];
          const keys = [...new Set(Array.from({ length: rnd(4) }, () => names[rnd(names.length)] as string))];
          return `{${keys.map((k) => `"${k}" : ${value(depth + 1)}`).join(',')}}`;
        }
      }
    };
    let withInexact = 0;
    for (let n = 0; n < 2000; n++) {
      const text = value(0);
      const expected = reference(text);
      if (expected.length > 0) withInexact++;
      assert.equal(findInexactInteger(text, []), expected[0], text);
    }
    assert.ok(withInexact > 100, `the generator must produce inexact integers often (${withInexact})`);
  });
});

describe('holdsUnsafeMagnitude', () => {
  const integer = fc
    .tuple(fc.boolean(), fc.stringMatching(/^[1-9][0-9]{12,20}$/))
    .map(([negative, digits]) => `${negative ? '-' : ''}${digits}`);
  const number = fc.oneof(
    integer,
    fc.integer().map(String),
    integer.map((i) => `${i}.5`),
    integer.map((i) => `${i}e0`),
  );
  const text = fc.letrec<{ node: string; array: string; object: string }>((tie) => ({
    node: fc.oneof({ depthSize: 'small' }, number, fc.constant('"9007199254740993"'), tie('array'), tie('object')),
    array: fc.array(tie('node'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
    // Without repeated names: classify refuses those before it asks.
    object: fc
      .uniqueArray(fc.tuple(fc.string({ maxLength: 3 }), tie('node')), { maxLength: 4, selector: ([name]) => name })
      .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  })).node;

  it('is true wherever the text holds an integer JSON.parse rounded, so a false answer may skip the scan', () => {
    fc.assert(
      fc.property(text, (t) => {
        if (findInexactInteger(t, []) !== undefined) assert.equal(holdsUnsafeMagnitude(JSON.parse(t)), true, t);
      }),
      { numRuns: 3_000 },
    );
  });

  it('looks at numbers only, at any depth', () => {
    assert.equal(holdsUnsafeMagnitude({ a: [1, { b: 2 ** 53 }] }), true);
    assert.equal(holdsUnsafeMagnitude([-(2 ** 53)]), true);
    // The one literal past 2^53 that rounds down onto it.
    assert.equal(holdsUnsafeMagnitude(JSON.parse('{"n":9007199254740993}')), true);
    assert.equal(holdsUnsafeMagnitude({ a: [1, { b: 2 ** 53 - 1 }], c: '9007199254740993' }), false);
    assert.equal(holdsUnsafeMagnitude(undefined), false);
  });
});
