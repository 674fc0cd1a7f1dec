import { test } from 'node:test';
import assert from 'node:assert/strict';
import { catalogReport } from '../../../bench/schema-catalog.ts';
import { corpus } from '../../helpers/testdata.ts';

test(
  'real MCP tool schemas (LiveMCPBench) are enforceable: at least 526 of 527',
  { skip: corpus('livemcpbench').skip },
  () => {
    const report = catalogReport();
    assert.equal(report.tools, 527);
    assert.ok(report.enforceable >= 526, JSON.stringify(report));
  },
);
