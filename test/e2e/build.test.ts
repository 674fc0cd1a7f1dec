import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '../..');
const BIN = join(ROOT, 'dist/cli.js');

test('npm run build leaves an executable bin that runs by its shebang', { timeout: 300_000 }, () => {
  rmSync(join(ROOT, 'dist'), { recursive: true, force: true });
  // The npm that runs this test when it runs under `npm test`, else the one on PATH.
  const npm = process.env.npm_execpath;
  const built =
    npm === undefined
      ? spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, encoding: 'utf8' })
      : spawnSync(process.execPath, [npm, 'run', 'build', '--silent'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(built.status, 0, built.stderr);
  assert.equal(readFileSync(BIN, 'utf8').split('\n')[0], '#!/usr/bin/env node');
  assert.equal(statSync(BIN).mode & 0o111, 0o111, 'executable by user, group and others');
  // Executed as a program, not handed to node: the kernel reads the shebang.
  const ran = spawnSync(BIN, ['--version'], { encoding: 'utf8' });
  assert.equal(ran.status, 0, ran.stderr);
  assert.match(ran.stdout, /^toolgate \d+\.\d+\.\d+\n$/);
});
