import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePolicy } from '../../../src/config/policy/policy.ts';

test('rateLimits: burst defaults to the rate, the refill is per call, identical rules combine, frozen', () => {
  const r = parsePolicy(`
version: 1
rateLimits:
  - { principal: "*", tool: "*", requests: 120, per: minute }
  - { principal: alice, tool: delete_repo, requests: 2, per: hour, burst: 1 }
  - { principal: "*", tool: "*", requests: 120, per: minute }
`);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
  assert.equal(r.policy.rateLimits.length, 2);
  const [all, alice] = r.policy.rateLimits;
  assert.deepEqual([all?.principal, all?.tool, all?.burst, all?.msPerCall], ['*', '*', 120, 500]);
  assert.deepEqual([alice?.burst, alice?.msPerCall], [1, 1_800_000]);
  assert.notEqual(all?.key, alice?.key);
  assert.ok(Object.isFrozen(r.policy.rateLimits[0]));
  const none = parsePolicy('version: 1\n');
  assert.ok(none.ok);
  assert.deepEqual(none.policy.rateLimits, []);
});

test('rateLimits: a malformed rule fails the policy, naming where', () => {
  const bad = [
    '{ principal: "*", tool: "*", requests: 0, per: minute }',
    '{ principal: "*", tool: "*", requests: 1.5, per: minute }',
    '{ principal: "*", tool: "*", requests: 10, per: day }',
    '{ principal: "*", tool: "*", requests: 10, per: minute, burst: 0 }',
    '{ principal: "*", tool: "*", per: minute }',
    '{ principal: "*", requests: 10, per: minute }',
    '{ principal: "*", tool: "*", requests: 10, per: minute, perIp: true }',
    '{ principal: "*", tool: "a b", requests: 10, per: minute }',
  ];
  for (const rule of bad) {
    const r = parsePolicy(`version: 1\nrateLimits:\n  - ${rule}\n`);
    assert.equal(r.ok, false, rule);
    if (!r.ok)
      assert.ok(
        r.errors.some((e) => e.path.startsWith('/rateLimits/0')),
        `${rule}: ${JSON.stringify(r.errors)}`,
      );
  }
});
