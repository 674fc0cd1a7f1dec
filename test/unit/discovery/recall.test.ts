import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { evaluate, loadEvalFiles } from '../../../src/commands/discover-eval.ts';
import { corpus, type CorpusName } from '../../helpers/testdata.ts';

/**
 * Quality floor on the public dev splits: the figures measured when the
 * ranking was tuned (docs/discovery-ranking.md), less a small margin.
 */
const floors: { set: string; corpus: CorpusName; catalog: string; queries: string; r5: number; r16: number }[] = [
  {
    set: 'MetaTool single-tool',
    corpus: 'metatool',
    catalog: 'tools.json',
    queries: 'queries-dev.jsonl',
    r5: 65,
    r16: 75.5,
  },
  {
    set: 'MetaTool multi-tool',
    corpus: 'metatool',
    catalog: 'tools.json',
    queries: 'multi-queries-dev.jsonl',
    r5: 65.5,
    r16: 84.5,
  },
  {
    set: 'LiveMCPBench',
    corpus: 'livemcpbench',
    catalog: 'catalog.json',
    queries: 'tasks-dev.jsonl',
    r5: 42.5,
    r16: 57.5,
  },
];

for (const f of floors) {
  const { path, skip } = corpus(f.corpus);
  test(`recall floor: ${f.set}`, { skip }, async () => {
    const files = await loadEvalFiles(join(path, f.catalog), join(path, f.queries));
    assert.ok(files.ok, files.ok ? '' : files.reason);
    const report = evaluate(files.value.catalog, files.value.queries, [5, 16]);
    assert.ok((report.recall.get(5) as number) >= f.r5, `recall@5 ${report.recall.get(5)} < ${f.r5}`);
    assert.ok((report.recall.get(16) as number) >= f.r16, `recall@16 ${report.recall.get(16)} < ${f.r16}`);
  });
}
