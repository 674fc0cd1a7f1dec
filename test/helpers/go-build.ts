import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * `go build -trimpath` of a module into a private staging folder, renamed to
 * `dir` once built, so test files that start at once never run a half-written
 * binary; the loser of a race keeps the winner's folder (`built` says whether
 * one is already there). `args` are what follows `-trimpath`, given the
 * staging folder to write into.
 */
export function goBuildInto(
  dir: string,
  build: {
    readonly module: string;
    readonly args: (staging: string) => readonly string[];
    readonly built: () => boolean;
    readonly env?: NodeJS.ProcessEnv;
  },
): void {
  mkdirSync(dirname(dir), { recursive: true });
  const staging = mkdtempSync(`${dir}.build-`);
  try {
    execFileSync('go', ['build', '-trimpath', ...build.args(staging)], {
      cwd: build.module,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...(build.env ?? process.env), GOFLAGS: '-buildvcs=false' },
    });
    if (!build.built()) renameSync(staging, dir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
