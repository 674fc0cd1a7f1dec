import { test } from 'node:test';
import assert from 'node:assert/strict';
import { insufficientScopeChallenge, quote, unauthorizedChallenge } from '../../../src/auth/challenge.ts';
import { strengthSatisfies } from '../../../src/auth/strength.ts';

const META = 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp';

test('401 challenges', () => {
  assert.equal(unauthorizedChallenge('no_credential', META), `Bearer resource_metadata="${META}"`);
  assert.equal(
    unauthorizedChallenge('bad_credential', META),
    `Bearer error="invalid_token", resource_metadata="${META}"`,
  );
  assert.equal(unauthorizedChallenge('no_credential'), 'Bearer');
});

test('403 step-up challenge', () => {
  assert.equal(
    insufficientScopeChallenge(['files.read', 'files.write'], META),
    `Bearer error="insufficient_scope", scope="files.read files.write", resource_metadata="${META}"`,
  );
  assert.equal(insufficientScopeChallenge([]), 'Bearer error="insufficient_scope"');
});

const injections: [string, string][] = [
  ['CRLF', 'https://a.example/x\r\nSet-Cookie: s=1'],
  ['quote', 'https://a.example/x", error="evil'],
  ['backslash', 'https://a.example/x\\"y'],
  ['non-ASCII', 'https://a.example/pfad/ü'],
  ['tab and NUL', 'https://a.example/\tx\u0000y'],
];
for (const [name, url] of injections) {
  test(`header injection through the URL is impossible: ${name}`, () => {
    for (const h of [unauthorizedChallenge('bad_credential', url), insufficientScopeChallenge(['a'], url)]) {
      // oxlint-disable-next-line no-control-regex -- a challenge must hold no control characters
      assert.doesNotMatch(h, /[\r\n\t\u0000\u0080-\uffff]/);
      const inner = h.match(/resource_metadata="(.*)"$/)?.[1];
      assert.ok(inner !== undefined);
      assert.doesNotMatch(inner.replace(/\\./g, ''), /"/);
    }
  });
}

test('scopes that could break out of the quoted string are dropped', () => {
  const h = insufficientScopeChallenge(['ok', 'a"b', 'c\r\nd', 'e f', 'g\\h', 'ok'], META);
  assert.equal(h, `Bearer error="insufficient_scope", scope="ok", resource_metadata="${META}"`);
});

test('non-http URLs are left out', () => {
  assert.equal(unauthorizedChallenge('no_credential', 'javascript:alert(1)'), 'Bearer');
  assert.equal(unauthorizedChallenge('no_credential', 'not a url'), 'Bearer');
});

test('quote escapes and strips', () => {
  assert.equal(quote('a"b\\c\r\nd\u00e9'), '"a\\"b\\\\cd"');
});

test('security levels rank credential strength', () => {
  const table: [Parameters<typeof strengthSatisfies>[0], Parameters<typeof strengthSatisfies>[1], boolean][] = [
    ['standard', 'anonymous', true],
    ['standard', 'static', true],
    ['standard', 'one_time', true],
    ['elevated', 'anonymous', false],
    ['elevated', 'static', false],
    ['elevated', 'short_lived', true],
    ['elevated', 'one_time', true],
    ['strict', 'static', false],
    ['strict', 'short_lived', false],
    ['strict', 'one_time', true],
  ];
  for (const [level, strength, want] of table)
    assert.equal(strengthSatisfies(level, strength), want, `${level}/${strength}`);
});
