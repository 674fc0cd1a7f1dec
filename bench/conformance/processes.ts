/**
 * Child processes for the conformance harness: each runs under Node 24 with
 * the tether preload (it dies with the harness), in its own process group (so
 * stopping it stops anything it started), and is tracked so that every exit
 * path of the harness ends it.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const TETHER = path.join(import.meta.dirname, 'tether.ts');
const STOP_GRACE_MS = 3000;
const LOG_TAIL_CHARS = 4000;

export interface Child {
  readonly name: string;
  readonly process: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** The last few thousand characters of stdout and stderr, for diagnosing a failed start. */
  output(): string;
}

const live = new Set<Child>();
let exitHookInstalled = false;

export function spawnNode(name: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Child {
  installExitHook();
  const proc = spawn(process.execPath, ['--import', TETHER, ...args], {
    cwd,
    env,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-LOG_TAIL_CHARS);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  proc.stdin?.on('error', () => {});
  const exited = new Promise<number | null>((resolve) => {
    proc.once('exit', (code) => resolve(code));
    proc.once('error', () => resolve(null));
  });
  const child: Child = { name, process: proc, exited, output: () => tail };
  live.add(child);
  void exited.then(() => live.delete(child));
  return child;
}

/** SIGTERM to the child's group, SIGKILL after a grace period. */
export async function stop(child: Child): Promise<void> {
  if (!live.has(child)) return;
  signalGroup(child, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), STOP_GRACE_MS);
  await child.exited;
  clearTimeout(timer);
}

export async function stopAll(): Promise<void> {
  await Promise.all([...live].map(stop));
}

/**
 * Polls `probe` until it returns true, the child exits, or the deadline
 * passes; the error names which, with the child's output tail.
 */
export async function waitUntil(
  child: Child,
  what: string,
  deadlineMs: number,
  probe: () => Promise<boolean>,
): Promise<void> {
  const until = Date.now() + deadlineMs;
  let exited = false;
  void child.exited.then(() => {
    exited = true;
  });
  while (Date.now() < until) {
    if (exited) throw new Error(`${child.name} exited before ${what}:\n${child.output()}`);
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${child.name} not ${what} within ${deadlineMs} ms:\n${child.output()}`);
}

/** True once `url` answers with `wantStatus` (any status when undefined). */
export async function answers(url: string, wantStatus?: number): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await res.body?.cancel();
    return wantStatus === undefined || res.status === wantStatus;
  } catch {
    return false;
  }
}

function signalGroup(child: Child, signal: NodeJS.Signals): void {
  const pid = child.process.pid;
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers run synchronously, so only an immediate SIGKILL is possible here.
  process.once('exit', () => {
    for (const child of live) signalGroup(child, 'SIGKILL');
  });
}
