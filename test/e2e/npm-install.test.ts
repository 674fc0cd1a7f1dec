import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, test } from 'node:test';

const ROOT = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'toolgate-first-install-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * npm as a first install runs it: on the machine's Node, before any
 * node_modules/.bin (where node@24 lives) is on PATH, in a copy of the
 * manifest and lockfile with a cache of its own.
 */
function npm(...args: string[]): { status: number | null; stderr: string } {
  const path = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((p) => !p.includes('node_modules'))
    .join(delimiter);
  const r = spawnSync('npm', [...args, '--cache', join(dir, 'cache'), '--no-audit', '--no-fund'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, PATH: path },
  });
  return { status: r.status, stderr: r.stderr };
}

test("a first npm install and npm run print nothing about toolgate's own engines", { timeout: 300_000 }, () => {
  copyFileSync(join(ROOT, 'package-lock.json'), join(dir, 'package-lock.json'));
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  manifest.scripts = { probe: 'node -e 0' };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest));
  const install = npm('install', '--dry-run', '--ignore-scripts');
  assert.equal(install.status, 0, install.stderr);
  // Dependencies that need a newer Node than the one running npm may still say so; toolgate itself may not.
  assert.doesNotMatch(install.stderr, /package: 'toolgate@/);
  const run = npm('run', '--silent', 'probe');
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stderr, '');
});

test('.nvmrc, engines and the node devDependency name one Node major', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    engines: { node: string };
    devDependencies: { node: string };
  };
  const major = readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim();
  assert.match(pkg.devDependencies.node, new RegExp(`^\\^${major}\\.`));
  assert.equal(pkg.engines.node, `>=${major} <${Number(major) + 1}`);
});
