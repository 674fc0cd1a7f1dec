import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memberNameCount, nestsDeeperThan, stringEnd } from '../../../src/json/scan.ts';

describe('nestsDeeperThan', () => {
  it('counts objects and arrays together, up to and past the limit', () => {
    assert.equal(nestsDeeperThan('[[[]]]', 3), false);
    assert.equal(nestsDeeperThan('[[[[]]]]', 3), true);
    assert.equal(nestsDeeperThan('{"a":[{"b":[1]}]}', 4), false);
    assert.equal(nestsDeeperThan('{"a":[{"b":[{}]}]}', 4), true);
    assert.equal(nestsDeeperThan('[[]],[[]],[[]]', 2), false, 'siblings do not add up');
  });

  it('skips brackets inside strings, escaped quotes included, and survives text that is not JSON', () => {
    assert.equal(nestsDeeperThan('["[[[[", "\\"[[[[", "\\\\"]', 1), false);
    assert.equal(nestsDeeperThan('["\\\\", [[]]]', 2), true, 'an escaped backslash ends before the quote');
    assert.equal(nestsDeeperThan('"unterminated [[[[[', 1), false);
    assert.equal(nestsDeeperThan('[[ never closed', 1), true);
    assert.equal(nestsDeeperThan('', 0), false);
  });
});

describe('stringEnd', () => {
  it('ends a string at the first quote an even run of backslashes leaves unescaped', () => {
    assert.equal(stringEnd('"ab"x', 0), 4);
    assert.equal(stringEnd(String.raw`"a\\"b"x`, 0), 5, 'an even run: the quote ends the string');
    assert.equal(stringEnd(String.raw`"a\"b"x`, 0), 6, 'an odd run escapes it');
    assert.equal(stringEnd(String.raw`"a\\\"b"x`, 0), 8);
    assert.equal(stringEnd('""', 0), 2);
  });

  it('runs an unterminated string to the end of the text rather than looping', () => {
    assert.equal(stringEnd('"abc', 0), 4);
    assert.equal(stringEnd(String.raw`"ab\"`, 0), 5);
    assert.equal(stringEnd(String.raw`"ab\\"`, 0), 6);
  });
});

describe('memberNameCount', () => {
  it('counts every string a colon follows, repeats and nested objects included', () => {
    assert.equal(memberNameCount('{"a":1,"a":{"b":[{"c":"d"}]},"e" :\n"f:"}'), 5);
    assert.equal(memberNameCount(String.raw`["a","b",{"c":"x\":"}]`), 1);
    assert.equal(memberNameCount('"a"'), 0);
    assert.equal(memberNameCount(String.raw`{"a\":":1}`), 1);
  });

  it('ends on text JSON.parse would refuse', () => {
    assert.equal(memberNameCount('{"a":"unterminated'), 1);
    assert.equal(memberNameCount('"'), 0);
  });
});
