import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { paramHeadersDisagree } from '../../../src/mcp/param-headers.ts';
import { paramHeaders } from '../../../src/validation/header-declarations.ts';

const schema = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    limit: { type: 'integer', 'x-mcp-header': 'Limit' },
    dryRun: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
    target: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
    list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } },
    either: { anyOf: [{ type: 'string', 'x-mcp-header': 'Either' }] },
    spaced: { type: 'string', 'x-mcp-header': 'bad name' },
  },
  'x-mcp-header': 'Root',
};

describe('paramHeaders', () => {
  it('reads x-mcp-header on properties reached through properties alone', () => {
    assert.deepEqual(paramHeaders(schema), [
      { field: 'mcp-param-region', path: ['region'] },
      { field: 'mcp-param-limit', path: ['limit'] },
      { field: 'mcp-param-dry-run', path: ['dryRun'] },
      { field: 'mcp-param-zone', path: ['target', 'zone'] },
    ]);
    assert.deepEqual(paramHeaders(true), []);
    assert.deepEqual(paramHeaders({ type: 'object' }), []);
  });
});

describe('paramHeadersDisagree', () => {
  const declared = paramHeaders(schema);
  const args = { region: 'us-west1', limit: 42, dryRun: false, target: { zone: 'b' } };
  const agreeing = {
    'mcp-param-region': 'us-west1',
    'mcp-param-limit': '42',
    'mcp-param-dry-run': 'false',
    'mcp-param-zone': 'b',
  };

  it('agrees when every mirrored value is there and equal, integers compared as numbers', () => {
    assert.equal(paramHeadersDisagree(declared, args, agreeing), false);
    assert.equal(paramHeadersDisagree(declared, args, { ...agreeing, 'mcp-param-limit': '42.0' }), false);
    assert.equal(
      paramHeadersDisagree(
        declared,
        { region: 'zürich' },
        { 'mcp-param-region': `=?base64?${Buffer.from('zürich').toString('base64')}?=` },
      ),
      false,
    );
    assert.equal(paramHeadersDisagree(declared, { region: null }, {}), false, 'a null value has no header');
    assert.equal(paramHeadersDisagree(declared, {}, {}), false);
    assert.equal(
      paramHeadersDisagree(declared, { region: { nested: 1 } }, {}),
      false,
      'an object cannot be mirrored: the schema decides',
    );
  });

  it('disagrees on a different value, a missing header, a header without its value or a malformed sentinel', () => {
    const cases: [unknown, Record<string, string | string[]>][] = [
      [args, { ...agreeing, 'mcp-param-region': 'eu-west1' }],
      [args, { ...agreeing, 'mcp-param-limit': '43' }],
      [args, { ...agreeing, 'mcp-param-limit': '' }],
      [args, { ...agreeing, 'mcp-param-dry-run': 'False' }],
      [args, { ...agreeing, 'mcp-param-zone': 'c' }],
      [args, { 'mcp-param-region': 'us-west1', 'mcp-param-limit': '42', 'mcp-param-dry-run': 'false' }],
      [{ region: 'us-west1' }, { 'mcp-param-region': 'us-west1', 'mcp-param-limit': '42' }],
      [{ region: 'a' }, { 'mcp-param-region': '=?base64?%%%?=' }],
      [{ region: 'a' }, { 'mcp-param-region': ['a', 'a'] }],
    ];
    for (const [a, h] of cases) assert.equal(paramHeadersDisagree(declared, a, h), true, JSON.stringify(h));
  });
});
