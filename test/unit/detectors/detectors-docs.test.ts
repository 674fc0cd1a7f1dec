import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { detectorTable } from '../../../src/detectors/table.ts';
import { section } from '../../helpers/doc-tables.ts';

it('docs/result-guard-detectors.md lists every detector exactly as the code defines it', () => {
  const doc = readFileSync(join(import.meta.dirname, '../../../docs/result-guard-detectors.md'), 'utf8');
  assert.equal(section(doc, 'detectors'), detectorTable());
});
