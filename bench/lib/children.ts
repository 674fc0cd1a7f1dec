import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { placed, type Placement } from './cpus.ts';

/**
 * Child servers of one benchmark run. Each writes stdout and stderr to its
 * own file rather than a pipe, so logging never costs the orchestrator (which
 * also generates the load) a cycle during a measurement.
 */
export interface Child {
  readonly name: string;
  readonly pid: number;
  /** Exit code, or the signal name when killed by one. */
  readonly exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  stop(graceMs?: number): Promise<number | string>;
  logTail(lines?: number): string;
}

const live = new Set<ChildProcess>();
let logDir: string | undefined;
const scratch = new Set<string>();
let installed = false;

/**
 * Kills every child still running, with every process it forked, when the
 * orchestrator exits for any reason: normal end, uncaught error, or Ctrl-C /
 * SIGTERM / SIGHUP (turned into a normal exit so the 'exit' hook runs). Only
 * a SIGKILL of the orchestrator itself can leave children behind.
 */
function installCleanup(): void {
  if (installed) return;
  installed = true;
  process.on('exit', () => {
    for (const c of live) signalGroup(c, 'SIGKILL');
    live.clear();
    if (logDir !== undefined) rmSync(logDir, { recursive: true, force: true });
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  });
  const signals = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
  for (const [sig, code] of Object.entries(signals)) {
    process.once(sig, () => process.exit(code));
  }
}

/** A temporary directory for a child's data (a database cluster), removed with the children however the orchestrator exits. */
export function scratchDir(prefix: string): string {
  installCleanup();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratch.add(dir);
  return dir;
}

export function spawnNode(
  name: string,
  script: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  role: keyof Placement = 'helpers',
): Child {
  return spawnProgram(name, process.execPath, [script, ...args], env, role);
}

/** Any program as a child server (a peer written in another language, its database, its cache), logged and cleaned up alike. */
export function spawnProgram(
  name: string,
  file: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  role: keyof Placement = 'helpers',
): Child {
  installCleanup();
  logDir ??= mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
  const logPath = join(logDir, `${name}.log`);
  const fd = openSync(logPath, 'a');
  // taskset execs the program, so the child's pid is the program's own.
  const cmd = placed(role, [file, ...args]);
  // Its own process group, so a signal reaches what it forks too: a gunicorn
  // master's workers, a postmaster's backends. Killing the leader alone left them running.
  const proc = spawn(cmd.file, cmd.args, {
    stdio: ['ignore', fd, fd],
    env: { ...process.env, ...env },
    detached: true,
  });
  closeSync(fd);
  if (proc.pid === undefined) throw new Error(`${name}: could not start`);
  live.add(proc);
  const exited = new Promise<number | string>((resolve) => {
    proc.once('exit', (code, signal) => {
      live.delete(proc);
      resolve(code ?? signal ?? 'unknown');
    });
  });
  const logTail = (lines = 20) => {
    try {
      return readFileSync(logPath, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  };
  const stop = async (graceMs = 10_000) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return exited;
    signalGroup(proc, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(proc, 'SIGKILL'), graceMs);
    const result = await exited;
    clearTimeout(timer);
    return result;
  };
  return { name, pid: proc.pid, exited, stop, logTail };
}

/** `signal` to the child's process group (its pid: it leads the group it was spawned into). */
function signalGroup(proc: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-(proc.pid as number), signal);
  } catch {
    // ESRCH: the whole group is gone already.
  }
}

/**
 * Polls `check` until it resolves true. Fails fast, with the child's last log
 * lines, if the child exits first or `timeoutMs` passes.
 */
export async function waitReady(child: Child, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  let exit: number | string | undefined;
  void child.exited.then((e) => {
    exit = e;
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exit !== undefined) throw new Error(`${child.name} exited (${exit}) before it was ready:\n${child.logTail()}`);
    if (await check().catch(() => false)) return;
    await sleep(10);
  }
  throw new Error(`${child.name} was not ready within ${timeoutMs} ms:\n${child.logTail()}`);
}

export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

export async function answers200(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
  await res.arrayBuffer();
  return res.status === 200;
}
