import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readCatalogFile } from '../../../src/commands/catalog-file.ts';

describe('readCatalogFile: the one reader of --catalog', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-catalog-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string): string => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  const tools = [{ name: 'a', inputSchema: { type: 'object' } }, { name: 'b' }];

  it('reads a tools/list result, the JSON-RPC response holding one, and a bare array alike', async () => {
    for (const doc of [{ tools }, { jsonrpc: '2.0', id: 1, result: { tools } }, tools]) {
      assert.deepEqual(await readCatalogFile(file('c.json', JSON.stringify(doc))), { ok: true, tools });
    }
  });

  it('says what is wrong without the path, which each command names itself', async () => {
    assert.deepEqual(await readCatalogFile(join(dir, 'missing.json')), {
      ok: false,
      problem: 'cannot be read (ENOENT)',
    });
    assert.deepEqual(await readCatalogFile(file('bad.json', '{"tools": [')), { ok: false, problem: 'not valid JSON' });
    for (const doc of [{ result: {} }, { tools: {} }, 'tools', null]) {
      const read = await readCatalogFile(file('none.json', JSON.stringify(doc)));
      assert.equal(read.ok, false, JSON.stringify(doc));
      assert.match(read.ok ? '' : read.problem, /^holds no tools: expected/);
    }
  });
});
