import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { generate, listTs } from '../../../src/grpc/codegen.ts';

const COMMITTED = resolve(import.meta.dirname, '../../../src/grpc/generated');

test('src/grpc/generated is exactly what npm run proto:gen produces from proto/ (never hand-edited)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-proto-'));
  try {
    generate(dir);
    const fresh = listTs(dir).map((f) => relative(dir, f));
    const committed = listTs(COMMITTED).map((f) => relative(COMMITTED, f));
    assert.deepEqual(committed, fresh, 'generated file set differs: run npm run proto:gen');
    for (const f of fresh) {
      assert.equal(
        await readFile(join(COMMITTED, f), 'utf8'),
        await readFile(join(dir, f), 'utf8'),
        `${f} differs: run npm run proto:gen`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
