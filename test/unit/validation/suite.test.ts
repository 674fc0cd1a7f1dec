import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyDraft, suiteRegistry } from '../../../bench/schema-suite.ts';
import { corpus } from '../../helpers/testdata.ts';

/**
 * Figures reached when this test was written, with the suite's remotes
 * registered; they may rise, never fall.
 */
const RECORDED = { 'draft2020-12': 1222, draft7: 927 } as const;

const { skip } = corpus('json-schema-test-suite');
const registry = skip === false ? suiteRegistry().registry : undefined;

for (const draft of ['draft2020-12', 'draft7'] as const) {
  test(`JSON Schema Test Suite ${draft}: no wrong accepts, agreement at least as recorded`, { skip }, () => {
    const { counts, cases } = classifyDraft(draft, undefined, registry);
    const wrongAccepts = cases
      .filter((c) => c.outcome === 'wrong_accept')
      .map((c) => `${c.file} | ${c.group} | ${c.test}`);
    assert.deepEqual(wrongAccepts, []);
    assert.equal(counts.total, counts.agree + counts.refused + counts.wrong_accept + counts.wrong_reject);
    assert.ok(counts.agree >= RECORDED[draft], `${counts.agree} agree, recorded ${RECORDED[draft]}`);
  });
}
