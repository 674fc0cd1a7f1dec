import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePolicy } from '../../../src/config/policy/policy.ts';

test('registered schemas load by absolute URI', () => {
  const r = parsePolicy(
    'version: 1\nschemas:\n  "https://schemas.example.com/code.json": { type: string, maxLength: 3 }\n',
  );
  assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
  assert.deepEqual(Object.keys(r.policy.schemas), ['https://schemas.example.com/code.json']);
  assert.ok(Object.isFrozen(r.policy.schemas));
});

test('a schema that cannot be registered fails the policy, naming its URI and the reason only', () => {
  const secret = 'canary-2f8e';
  const r = parsePolicy(
    `version: 1\nschemas:\n  "relative/code.json": { type: string }\n  "https://schemas.example.com/p.json": { type: string, pattern: "(a)\\\\1${secret}" }\n`,
  );
  assert.equal(r.ok, false);
  const errors = !r.ok ? r.errors : [];
  assert.ok(
    errors.some((e) => e.path === '/schemas/relative~1code.json' && /invalid_uri/.test(e.message)),
    JSON.stringify(errors),
  );
  assert.ok(
    errors.some(
      (e) => e.path === '/schemas/https:~1~1schemas.example.com~1p.json' && /invalid_pattern/.test(e.message),
    ),
    JSON.stringify(errors),
  );
  assert.ok(!JSON.stringify(errors).includes(secret));
});

test('schemas must be objects or booleans', () => {
  const r = parsePolicy('version: 1\nschemas:\n  "https://schemas.example.com/x.json": 3\n');
  assert.equal(r.ok, false);
});
