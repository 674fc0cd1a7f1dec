import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { inCi } from './testdata.ts';

/**
 * The grpc-go validator of test/grpc-peer, built with the machine's Go and
 * cached in .cache/grpc-peer keyed by the module's digest, as the control
 * plane is (test/kube/binaries.ts). `.ci/run` builds it before the tests;
 * a test that finds no build makes one.
 */

const MODULE = join(import.meta.dirname, '..', 'grpc-peer');
const REPO = join(import.meta.dirname, '..', '..');

function binary(): string {
  const hash = createHash('sha256');
  for (const name of readdirSync(MODULE).sort())
    hash
      .update(name)
      .update('\0')
      .update(readFileSync(join(MODULE, name)));
  return join(REPO, '.cache', 'grpc-peer', hash.digest('hex').slice(0, 12), 'validator');
}

/** Builds into a private folder and renames it into place, so a test never runs a half-written binary. */
export function buildGoValidator(): string {
  const path = binary();
  if (existsSync(path)) return path;
  const dir = join(path, '..');
  mkdirSync(join(dir, '..'), { recursive: true });
  const staging = mkdtempSync(`${dir}.build-`);
  try {
    execFileSync('go', ['build', '-trimpath', '-o', join(staging, 'validator'), '.'], {
      cwd: MODULE,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, GOFLAGS: '-buildvcs=false' },
    });
    if (!existsSync(path)) renameSync(staging, dir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return path;
}

/**
 * For node:test's `skip`: why the grpc-go validator cannot run here, or false.
 * In CI nothing skips: a peer that will not build fails the tests.
 */
export function goValidatorSkip(): false | string {
  if (inCi()) return false;
  try {
    buildGoValidator();
    return false;
  } catch (err) {
    return `the grpc-go validator could not be built (${(err as Error).message.split('\n')[0]}); see docs/testing.md`;
  }
}

export interface GoValidator {
  /** host:port for a policy's `target`. */
  readonly target: string;
  close(): Promise<void>;
}

/** Starts the grpc-go validator; it serves until `close`, which closes its stdin. */
export async function startGoValidator(args: readonly string[] = []): Promise<GoValidator> {
  const child: ChildProcess = spawn(buildGoValidator(), args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once('line', (line) => resolve(line.trim()));
    child.once('exit', (code) =>
      reject(new Error(`the grpc-go validator exited (${String(code)}) before it listened`)),
    );
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    target: `127.0.0.1:${port}`,
    close: async () => {
      child.stdin?.end();
      await exited;
    },
  };
}

if (import.meta.main) {
  process.stdout.write(`${buildGoValidator()}\n`);
}
