import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePolicy } from '../../../src/config/policy/policy.ts';

const DIGEST = 'a'.repeat(64);

describe('the policy contracts section', () => {
  it('defaults to off, so existing policies change nothing', () => {
    const r = parsePolicy('version: 1\n');
    assert.ok(r.ok);
    assert.deepEqual(
      { ...r.policy.contracts, tools: { ...r.policy.contracts.tools } },
      { mode: 'off', pin: 'explicit', unknownTools: 'allow', lint: 'off', tools: {} },
    );
  });

  it('reads the mode, pinning, unknown-tool and lint settings and several digests per tool', () => {
    const r = parsePolicy(
      `contracts:\n  mode: enforce\n  pin: first-seen\n  unknownTools: quarantine\n  lint: alert\n  tools:\n    search: [${DIGEST}, ${'b'.repeat(64)}]\n`,
    );
    assert.ok(r.ok);
    assert.equal(r.policy.contracts.mode, 'enforce');
    assert.equal(r.policy.contracts.pin, 'first-seen');
    assert.equal(r.policy.contracts.unknownTools, 'quarantine');
    assert.equal(r.policy.contracts.lint, 'alert');
    assert.deepEqual(r.policy.contracts.tools.search, [DIGEST, 'b'.repeat(64)]);
  });

  const refused: [string, string, string][] = [
    ['an unknown mode', 'contracts:\n  mode: block\n', '/contracts/mode'],
    [
      'a digest that is not 64 lower-case hex',
      `contracts:\n  tools:\n    search: [${'A'.repeat(64)}]\n`,
      '/contracts/tools/search/0',
    ],
    ['an empty digest list', 'contracts:\n  tools:\n    search: []\n', '/contracts/tools/search'],
    ['a misspelt key', 'contracts:\n  unknownTool: allow\n', '/contracts/unknownTool'],
    ['the wildcard as a tool', `contracts:\n  tools:\n    "*": [${DIGEST}]\n`, '/contracts/tools/*'],
  ];
  for (const [what, text, path] of refused) {
    it(`refuses ${what} with a pointer and no echo of the value`, () => {
      const r = parsePolicy(text);
      assert.equal(r.ok, false);
      if (r.ok) return;
      assert.ok(
        r.errors.some((e) => e.path === path),
        JSON.stringify(r.errors),
      );
      for (const e of r.errors) assert.ok(!e.message.includes('AAAA') && !e.message.includes('block'), e.message);
    });
  }
});
