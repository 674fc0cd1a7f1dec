import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePolicy } from '../../../src/config/policy/policy.ts';

const hooks = '[{ event: tools/call, phase: request }]';

test('validators: defaults applied, sorted by priority then name, frozen', () => {
  const r = parsePolicy(`
version: 1
validators:
  - { name: secrets, target: "127.0.0.1:7001", hooks: ${hooks}, priority: 200, mode: audit, failOpen: true, timeoutMs: 50 }
  - { name: pii, target: "dns:///pii.security:7000", hooks: ${hooks} }
  - { name: biz, target: "127.0.0.1:7002", hooks: ${hooks} }
`);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
  assert.deepEqual(
    r.policy.validators.map((v) => v.name),
    ['biz', 'pii', 'secrets'],
  );
  assert.deepEqual(r.policy.validators[1], {
    name: 'pii',
    target: 'dns:///pii.security:7000',
    hooks: [{ event: 'tools/call', phase: 'request' }],
    priority: 100,
    mode: 'active',
    failOpen: false,
    timeoutMs: 1000,
  });
  assert.equal(r.policy.validators[2]?.mode, 'audit');
  assert.equal(r.policy.validators[2]?.failOpen, true);
  assert.ok(Object.isFrozen(r.policy.validators[0]));
});

test('no validators section: an empty list', () => {
  const r = parsePolicy('version: 1\n');
  assert.ok(r.ok);
  assert.deepEqual(r.policy.validators, []);
});

for (const [label, entry, path] of [
  ['unknown key', `{ name: a, target: "h:1", hooks: ${hooks}, retries: 2 }`, '/validators/0/retries'],
  ['missing hooks', '{ name: a, target: "h:1" }', '/validators/0/hooks'],
  ['empty hooks', '{ name: a, target: "h:1", hooks: [] }', '/validators/0/hooks'],
  [
    'unsupported event',
    '{ name: a, target: "h:1", hooks: [{ event: tools/list, phase: request }] }',
    '/validators/0/hooks/0/event',
  ],
  [
    'unsupported phase',
    '{ name: a, target: "h:1", hooks: [{ event: tools/call, phase: response }] }',
    '/validators/0/hooks/0/phase',
  ],
  ['bad mode', `{ name: a, target: "h:1", hooks: ${hooks}, mode: block }`, '/validators/0/mode'],
  ['timeout too long', `{ name: a, target: "h:1", hooks: ${hooks}, timeoutMs: 30001 }`, '/validators/0/timeoutMs'],
  ['space in target', `{ name: a, target: "h 1", hooks: ${hooks} }`, '/validators/0/target'],
  ['bad name', `{ name: A-b, target: "h:1", hooks: ${hooks} }`, '/validators/0/name'],
] as const) {
  test(`validators refuse ${label}`, () => {
    const r = parsePolicy(`version: 1\nvalidators:\n  - ${entry}\n`);
    assert.equal(r.ok, false);
    assert.ok(!r.ok && r.errors.some((e) => e.path === path), JSON.stringify(!r.ok && r.errors));
  });
}

test('validators need distinct names', () => {
  const r = parsePolicy(
    `version: 1\nvalidators:\n  - { name: a, target: "h:1", hooks: ${hooks} }\n  - { name: a, target: "h:2", hooks: ${hooks} }\n`,
  );
  assert.equal(r.ok, false);
  assert.ok(!r.ok && r.errors.some((e) => e.path === '/validators/1/name'));
});
