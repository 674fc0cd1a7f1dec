import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readFlags, usage } from '../../../src/config/flags.ts';
import { loadSettings, settingDefs, sidecarUsage } from '../../../src/config/settings.ts';
import { SettingError } from '../../../src/errors.ts';

const defs = [{ flag: '--port', env: 'X_PORT', default: '1', doc: 'The `port`.' }];

test('reads --flag value and --flag=value', () => {
  const r = readFlags(['--port', '8', '--port=9'], defs);
  assert.equal(r.kind, 'values');
  if (r.kind === 'values') assert.equal(r.values.get('--port'), '9');
});

test('--help, -h and --version win over everything else on the line', () => {
  assert.deepEqual(readFlags(['--port', '8', '--help'], defs), { kind: 'help' });
  assert.deepEqual(readFlags(['-h', '--bogus'], defs), { kind: 'help' });
  assert.deepEqual(readFlags(['--version'], defs), { kind: 'version' });
});

test('an unknown flag, a missing value or a stray argument is one line naming only the flag', () => {
  for (const [argv, line] of [
    [['--bogus', 'secret-value'], 'invalid setting --bogus: unknown flag'],
    [['-x'], 'invalid setting -x: unknown flag'],
    [['--port'], 'invalid setting --port: missing value'],
    [['stray'], 'invalid setting stray: unexpected argument'],
  ] as const) {
    assert.throws(
      () => readFlags(argv, defs),
      (e: unknown) => e instanceof SettingError && e.message === line && !e.message.includes('secret'),
    );
  }
});

test('usage lists every setting with its variable and default, from the README table source', () => {
  assert.match(usage('usage: x', defs), /--port <value> {3}X_PORT \(default 1\)\n {6}The port\./);
  for (const d of settingDefs) {
    assert.ok(sidecarUsage([]).includes(d.flag) && sidecarUsage([]).includes(d.env), d.flag);
  }
});

test('the new settings: tool errors as results by default, ungranted tools not hidden', () => {
  const s = loadSettings([], {});
  assert.equal(s.toolErrors, 'result');
  assert.equal(s.hideUngranted, false);
  assert.equal(
    loadSettings([], { TOOLGATE_TOOL_ERRORS: 'protocol', TOOLGATE_HIDE_UNGRANTED: 'true' }).toolErrors,
    'protocol',
  );
  assert.equal(loadSettings(['--hide-ungranted', 'yes'], {}).hideUngranted, true);
  assert.throws(
    () => loadSettings([], { TOOLGATE_TOOL_ERRORS: 'both' }),
    /invalid setting TOOLGATE_TOOL_ERRORS: expected result or protocol/,
  );
  const typo = loadSettings([], { TOOLGATE_HIDE_UNGRANTED: 'ture' });
  assert.equal(typo.hideUngranted, false);
  assert.deepEqual(typo.warnings, [
    'TOOLGATE_HIDE_UNGRANTED is not a boolean; ungranted tools are answered as not granted',
  ]);
});
