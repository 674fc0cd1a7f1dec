import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nestsDeeperThan } from '../../../src/json/scan.ts';

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
