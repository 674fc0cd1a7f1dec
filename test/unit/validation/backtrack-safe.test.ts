import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backtracksLinearly } from '../../../src/validation/backtrack-safe.ts';
import { compilePattern, linearRegExpEngine } from '../../../src/validation/regex.ts';
import { loadAttacks } from '../../../bench/schema-catalog.ts';
import { corpus } from '../../helpers/testdata.ts';

/** Shapes real schemas use, each repetition followed only by what it cannot match. */
const linear = [
  '^[a-z0-9-]+/[a-z0-9-]+$',
  '^\\d{4}-\\d{2}-\\d{2}$',
  '^[A-Za-z0-9_]+$',
  '^https?://[^/]+$',
  '^[GDZTKOFS]*$',
  '^AS\\d+$',
  '^v\\d+\\.\\d+\\.\\d+$',
  '^[^@\\s]+@[^@\\s]+$',
  '^\\s*\\S',
  '^#[0-9a-fA-F]{6}$',
  '^[a-z]{2,3}$',
  '^[^\\d]+5$',
  '^\\w+:\\s*\\d+$',
  '^.*$',
  '^[\\-\\]\\\\]+;$',
  '^😀+x$',
  '^[a-]+b$',
  '^\\x41+\\u0042$',
  '^',
];

/** Each can repeat, or try another way, in more than one way per character, or is not anchored. */
const notLinear = [
  '[a-z]+x',
  'abc',
  '^(a+)+$',
  '^(?:ab)+$',
  '^a|b$',
  '^a*a*$',
  '^[a-z]+[a-z0-9]*$',
  '^\\S+@\\S+$',
  '^.*x$',
  '^\\w+\\d$',
  '^a*b?a$',
  '^a{1,3}a$',
  '^[^/]+.$',
  '^a+?b$',
  '^a*?$',
  '^(?=a)a+$',
  '^(a)\\1+$',
  '^\\bx+$',
  '^\\p{L}+\\d$',
  '^\\cA+$',
  '^\\u{41}+$',
  '^\\uD83D\\uDE00+$',
  '^[\\uD83D\\uDE00]+$',
  '^a$b',
  '^a^b',
  // Linear, but past the item bound that keeps the proof's constant small.
  `^${'x'.repeat(25)}$`,
  '^[a-z]+.[a-z]+$',
  '^\\s+\\u00a0$',
  '^\\s+\\u2028$',
  '^\\D+ax$',
  '(',
];

test('patterns whose every backtrack fails at once are run natively', () => {
  for (const p of linear) assert.equal(backtracksLinearly(p), true, p);
});

test('patterns that may backtrack more than linearly, or that the proof does not cover, stay on RE2', () => {
  for (const p of notLinear) assert.equal(backtracksLinearly(p), false, p);
});

test('sets are exact: a character a negated set or escape holds counts as overlapping', () => {
  // Each pair differs only in whether the follower's character is in the repeated set.
  const pairs: [string, string][] = [
    ['^[^a]+a$', '^[^a]+b$'],
    ['^\\D+0$', '^\\D+\\u0661$'],
    ['^\\W+_$', '^\\W+é$'],
    ['^\\S+\\u3000$', '^\\S+\\u0085$'],
    ['^.+\\u2029$', '^.+\\u0085$'],
    ['^[a-c]+d$', '^[a-c]+c$'],
  ];
  for (const [disjoint, overlapping] of pairs) {
    assert.equal(backtracksLinearly(disjoint), true, disjoint);
    assert.equal(backtracksLinearly(overlapping), false, overlapping);
  }
});

test('a natively run pattern answers as ECMAScript and RE2 do', () => {
  const inputs = ['', 'a', 'acme/payments-service', 'acme/Payments', 'a/b/c', 'a/b\n', '2025-10-01', '2025-1-01'];
  inputs.push('http://x', 'https://x/y', 'v1.2.3', 'x@y', 'x@@y', '  z', '#00ffAA', 'é', '😀😀x', '-]\\;', 'AAB');
  for (const p of linear) {
    const checked = compilePattern(p);
    assert.ok(checked.ok, p);
    const engine = linearRegExpEngine(p, 'u');
    assert.equal(String(engine), `native:${p}`);
    const js = new RegExp(p, 'u');
    for (const s of inputs) {
      assert.equal(engine.test(s), js.test(s), `${p} on ${JSON.stringify(s)}`);
      assert.equal(engine.test(s), checked.re2.test(s), `${p} on ${JSON.stringify(s)} against RE2`);
    }
  }
  for (const p of notLinear.slice(0, -1)) {
    if (compilePattern(p).ok) assert.equal(String(linearRegExpEngine(p, 'u')), `re2:${p}`);
  }
});

test('no regexlib ReDoS pattern is judged linear', { skip: corpus('redos').skip }, () => {
  const attacks = loadAttacks();
  assert.ok(attacks.length > 300);
  for (const a of attacks) assert.equal(backtracksLinearly(a.pattern), false, a.id);
});
