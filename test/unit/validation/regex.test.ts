import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RE2JS } from 're2js';
import { compilePattern, linearRegExpEngine } from '../../../src/validation/regex.ts';
import { compileToolSchema } from '../../../src/validation/compile.ts';
import { attackString, loadAttacks } from '../../../bench/schema-catalog.ts';
import { corpus } from '../../helpers/testdata.ts';

/** Each pattern must agree with ECMAScript (`u` flag) on every listed input. */
const differential: [string, string[]][] = [
  ['^a.b$', ['axb', 'a\nb', 'a\rb', 'a\u2028b', 'a\u2029b', 'a\u0085b', 'a😀b']],
  [
    '^\\s$',
    [
      ' ',
      '\t',
      '\v',
      '\f',
      '\u00a0',
      '\u1680',
      '\u2000',
      '\u200a',
      '\u2028',
      '\u202f',
      '\u205f',
      '\u3000',
      '\ufeff',
      '\u0085',
      '\u200b',
      'x',
    ],
  ],
  ['^\\S$', [' ', '\u00a0', '\ufeff', 'x', '😀']],
  ['^[\\s\\d]+$', ['1 2\u00a03', 'a']],
  ['^[^\\s]+$', ['abc', 'a b', 'a\u3000b']],
  ['^[\\S]+$', ['abc', 'a\u2028b']],
  ['^\\d+$', ['0123456789', '\u0661\u0662', '１２']],
  ['^\\w+$', ['azAZ09_', 'é', 'ſ', '\u212a']],
  ['\\bword\\b', ['a word here', 'swordfish', 'word', 'éwordé']],
  ['^\\W$', ['é', 'a', ' ']],
  ['^[]$', ['', 'a']],
  ['^[^]$', ['a', '\n', '😀']],
  ['^\\p{L}+$', ['héllo', 'Ωμέγα', '123']],
  ['^\\p{Lu}\\p{Ll}*$', ['Hello', 'hello']],
  ['^\\P{L}+$', ['123', 'a1']],
  ['^\\p{Script=Greek}+$', ['αβγ', 'abc']],
  ['^\\p{ASCII}+$', ['abc', 'é']],
  ['^\\u{1F600}\\uD83D\\uDE00$', ['😀😀', '😀']],
  ['^\\x41\\u0042\\cC\\0$', ['AB\u0003\u0000', 'AB']],
  ['^[a-z-]+$', ['a-b', 'A']],
  ['^[\\-\\]\\\\]+$', ['-]\\', 'a']],
  ['^[\\b]$', ['\b', 'b']],
  ['^a{2,3}b{2,}c{1}$', ['aabbc', 'aaaabbc', 'aabc']],
  ['(?:ab)+|x*?y', ['abab', 'xxy', 'z']],
  ['^(?<year>\\d{4})-(\\d{2})$', ['2024-01', '24-01']],
  ['\\/\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\^\\$', ['/.*+?()[]{}|^$', 'x']],
  ['^.$', ['😀', '\ud800', 'ab']],
];

test('translated patterns agree with ECMAScript on the known differences', () => {
  for (const [pattern, inputs] of differential) {
    const checked = compilePattern(pattern);
    assert.equal(checked.ok, true, pattern);
    if (!checked.ok) continue;
    const js = new RegExp(pattern, 'u');
    for (const input of inputs)
      assert.equal(checked.re2.test(input), js.test(input), `${pattern} on ${JSON.stringify(input)}`);
  }
});

test('patterns without a faithful linear-time equivalent are refused', () => {
  for (const pattern of [
    '(a)\\1',
    '(?<n>a)\\k<n>',
    '(?=a)',
    '(?!a)',
    '(?<=a)b',
    '(?<!a)b',
    '(?i:a)',
    '\\p{scx=Greek}',
    '\\p{Alphabetic}',
    '\\p{C}',
    'a{1001}',
    '\\a',
    '\\-',
    'a{',
    '(',
  ]) {
    assert.equal(compilePattern(pattern).ok, false, pattern);
  }
});

test('the engine handed to ajv is RE2 (linear by construction), keyed by its own source', () => {
  const rx = linearRegExpEngine('^(a+)+$', 'u');
  assert.equal(rx.test('a'.repeat(50_000) + 'b'), false);
  assert.notEqual(String(linearRegExpEngine('a', 'u')), String(linearRegExpEngine('b', 'u')));
  const checked = compilePattern('^(a+)+$');
  assert.ok(checked.ok && checked.re2 instanceof RE2JS);
});

test("a yes/no on an anchored pattern is answered by the DFA, not re2js's one-pass engine", () => {
  // re2js builds a one-pass program for this pattern; if an upgrade renames the field, this says so.
  const plain = RE2JS.compile('^[a-z0-9-]+/[a-z0-9-]+$').re2() as unknown as { onepass: unknown };
  assert.notEqual(plain.onepass, null);
  const checked = compilePattern('^[a-z0-9-]+/[a-z0-9-]+$');
  assert.ok(checked.ok);
  assert.equal((checked.re2.re2() as unknown as { onepass: unknown }).onepass, null);
  for (const input of ['acme/payments-service', 'acme/Payments', '/x', 'a/b/c', 'a/b\n'])
    assert.equal(checked.re2.test(input), /^[a-z0-9-]+\/[a-z0-9-]+$/u.test(input), input);
});

test(
  'every regexlib ReDoS pattern is either refused or validates its pumped attack on RE2',
  { skip: corpus('redos').skip },
  () => {
    const attacks = loadAttacks();
    assert.ok(attacks.length > 300);
    let compiled = 0;
    for (const a of attacks) {
      const c = compileToolSchema({ type: 'string', pattern: a.pattern });
      if (!c.ok) {
        assert.ok(c.reason === 'invalid_pattern' || c.reason === 'pattern_too_long', `${a.id}: ${c.reason}`);
        continue;
      }
      compiled += 1;
      const checked = compilePattern(a.pattern);
      assert.ok(checked.ok && checked.re2 instanceof RE2JS, a.id);
      const r = c.validate(attackString(a));
      assert.ok(r.ok || r.code === 'invalid_arguments', a.id);
    }
    assert.ok(compiled > 250, `only ${compiled} compiled`);
  },
);
