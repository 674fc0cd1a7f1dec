import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { errors } from '../../src/errors.ts';
import {
  conditionsTable,
  errorTable,
  injectorMetricsTable,
  metricsTable,
  policyCommandsTable,
  section,
  settingsTable,
  wireTable,
} from '../helpers/doc-tables.ts';
import { CONDITION_VARIABLES } from '../../src/config/policy/condition-variables.ts';
import { declaredVariables } from '../../src/config/policy/conditions.ts';

const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');

describe('the README is kept equal to the code', () => {
  it('lists every error exactly as the registry defines it', () => {
    assert.equal(section(readme, 'errors'), errorTable());
    assert.equal(section(readme, 'wire'), wireTable());
  });
  it('lists every setting with its flag, variable and default', () => {
    assert.equal(section(readme, 'settings'), settingsTable());
  });
  it('lists every metric', async () => {
    assert.equal(section(readme, 'metrics'), await metricsTable());
  });
  it('lists every metric of the sidecar injector', () => {
    assert.equal(section(readme, 'injector-metrics'), injectorMetricsTable());
  });
  it('lists the variables of conditions and the offline policy commands', () => {
    assert.equal(section(readme, 'conditions'), conditionsTable());
    assert.equal(section(readme, 'policy-commands'), policyCommandsTable());
  });
});

describe('the documented condition variables', () => {
  it('are the ones CEL is told about, on the same rows, with the same fields', () => {
    const declared = declaredVariables();
    for (const surface of ['tool', 'resource', 'prompt'] as const) {
      const documented = Object.fromEntries(
        CONDITION_VARIABLES.filter((v) => v.surfaces.includes(surface)).map((v) => [v.name, v.fields]),
      );
      assert.deepEqual(documented, declared[surface], surface);
    }
  });
});

describe('the error registry', () => {
  it('marks outsideMcp only codes that no part of the MCP request path sends', () => {
    const mcpPath = [
      'pipeline',
      'interceptors',
      'upstream',
      'execution',
      'mcp',
      'discovery',
      'auth',
      'grants',
      'catalogue',
    ];
    const sources = mcpPath.flatMap((dir) =>
      readdirSync(join(import.meta.dirname, '../../src', dir), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts'))
        .map((f) => readFileSync(join(import.meta.dirname, '../../src', dir, f), 'utf8')),
    );
    const marked = Object.entries(errors)
      .filter(([, e]) => e.outsideMcp === true)
      .map(([id]) => id);
    assert.ok(marked.length > 0);
    for (const id of marked)
      assert.ok(!sources.some((text) => text.includes(`'${id}'`)), `${id} is sent on the MCP path`);
  });

  it('uses stable snake_case codes, -31xxx numbers that repeat the status, and content-free messages', () => {
    for (const [id, e] of Object.entries(errors)) {
      assert.match(e.code, /^[a-z]+(_[a-z]+)*$/, id);
      if (e.rpcCode <= -31000 && e.rpcCode > -32000) assert.equal(-e.rpcCode - 31000, e.status, id);
      else assert.ok(e.rpcCode <= -32000 && e.rpcCode >= -32768, `${id} uses a JSON-RPC reserved code`);
      assert.ok(Object.isFrozen(e));
      assert.doesNotMatch(e.message, /\$\{|%s/, 'messages are fixed text');
    }
  });
});
