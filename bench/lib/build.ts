import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** A checkout compiled the way the container image runs it (`node dist/cli.js`). */
export interface Build {
  /** The compiled entry point. */
  readonly cli: string;
  /** bench/floor.ts with its types stripped, so the floor, too, runs without the type-stripping loader. */
  readonly floor: string;
  /**
   * What the image sets in the sidecar's environment beyond its files: NODE_COMPILE_CACHE, filled
   * by the build's dist/warm-compile-cache.js as the Dockerfile fills it (none when the checkout
   * predates it).
   */
  readonly env: Readonly<Record<string, string>>;
}

const ownRoot = resolve(import.meta.dirname, '..', '..');
const tsc = join(ownRoot, 'node_modules', '.bin', 'tsc');
const made: string[] = [];
const STRIP =
  "import { stripTypeScriptTypes } from 'node:module'; import { readFileSync, writeFileSync } from 'node:fs'; " +
  "writeFileSync(process.argv[2], stripTypeScriptTypes(readFileSync(process.argv[1], 'utf8')));";
process.once('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/**
 * Compiles `checkout` (this one by default) with its own tsconfig.build.json
 * into a temporary directory that mirrors the image's layout: `dist/` beside
 * links to the checkout's package.json, proto/ and node_modules/, because
 * compiled modules find those relative to themselves. Nothing is written into
 * the checkout, so a baseline can be another engineer's worktree.
 */
export function compile(checkout: string = ownRoot): Build {
  const root = resolve(checkout);
  for (const need of ['tsconfig.build.json', 'package.json', 'node_modules']) {
    if (!existsSync(join(root, need)))
      throw new Error(`${root} is not a toolgate checkout with dependencies installed (no ${need})`);
  }
  const out = mkdtempSync(join(tmpdir(), 'toolgate-bench-build-'));
  made.push(out);
  for (const link of ['package.json', 'proto', 'node_modules']) {
    if (existsSync(join(root, link))) symlinkSync(join(root, link), join(out, link));
  }
  execFileSync(tsc, ['-p', join(root, 'tsconfig.build.json'), '--outDir', join(out, 'dist'), '--sourceMap', 'false'], {
    stdio: 'inherit',
  });
  const floor = join(out, 'floor.js');
  // In a child, so the API's experimental warning is silenced without touching this process's warnings.
  execFileSync(
    process.execPath,
    [
      '--disable-warning=ExperimentalWarning',
      '--input-type=module',
      '-e',
      STRIP,
      join(ownRoot, 'bench', 'floor.ts'),
      floor,
    ],
    { stdio: 'inherit' },
  );
  return { cli: join(out, 'dist', 'cli.js'), floor, env: warmCompileCache(out) };
}

function warmCompileCache(out: string): Record<string, string> {
  const warm = join(out, 'dist', 'warm-compile-cache.js');
  if (!existsSync(warm)) return {};
  const env = { NODE_COMPILE_CACHE: join(out, 'compile-cache') };
  execFileSync(process.execPath, [warm], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...env } });
  return env;
}
