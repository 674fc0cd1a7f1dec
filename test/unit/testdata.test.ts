import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { corpus, CORPORA, TESTDATA_ENV, testdataRoot } from '../helpers/testdata.ts';

const root = mkdtempSync(join(tmpdir(), 'toolgate-testdata-'));
mkdirSync(join(root, CORPORA['json-parsing']), { recursive: true });
after(() => rmSync(root, { recursive: true, force: true }));

test('the corpora are found where TOOLGATE_TESTDATA says, else beside the checkout', () => {
  assert.equal(testdataRoot({ [TESTDATA_ENV]: root }), root);
  assert.equal(testdataRoot({ [TESTDATA_ENV]: '' }), join(import.meta.dirname, '../../../shared/testdata'));
  assert.deepEqual(corpus('json-parsing', { [TESTDATA_ENV]: root }), {
    path: join(root, 'json-parsing/test_parsing'),
    skip: false,
  });
});

test('an absent corpus skips with a message naming the variable, and fails in CI', () => {
  const absent = corpus('redos', { [TESTDATA_ENV]: root });
  assert.equal(absent.path, join(root, 'redos/regexlib-attacks.json'));
  assert.match(String(absent.skip), new RegExp(`corpus redos not found at .*; set ${TESTDATA_ENV} `));
  assert.equal(corpus('redos', { [TESTDATA_ENV]: root, CI: 'false' }).skip, absent.skip);
  assert.throws(
    () => corpus('redos', { [TESTDATA_ENV]: root, CI: 'true' }),
    /corpus redos not found .*CI runs every corpus test/,
  );
});
