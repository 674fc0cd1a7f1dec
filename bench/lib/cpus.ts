import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Which CPUs the bench's processes run on. Measured proxies (the floor, the
 * peer, every toolgate) share the last CPU; the orchestrator (the load
 * generator) and the helpers (upstream stubs, validator, OTLP receiver) keep
 * the others. On a shared VM each virtual CPU has its own neighbours on the
 * host, so two proxies on different CPUs in the same seconds can read up to
 * 2× apart for the same work; on one CPU they meet the same neighbours, and
 * an interleaved pair's ratio keeps the proxies' difference, not the CPUs'.
 * Off with BENCH_PIN=0, or when there is one CPU or no `taskset`.
 */
export interface Placement {
  readonly proxies: string;
  readonly helpers: string;
}

export const placement: Placement | undefined = choose();

function choose(): Placement | undefined {
  if (process.env.BENCH_PIN === '0') return undefined;
  const n = availableParallelism();
  if (n < 2 || !hasTaskset()) return undefined;
  return { proxies: String(n - 1), helpers: n === 2 ? '0' : `0-${n - 2}` };
}

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Moves a running process (every thread) to the CPUs of `role`; a no-op when unpinned. */
export function pin(pid: number, role: keyof Placement): void {
  if (placement === undefined) return;
  execFileSync('taskset', ['-a', '-p', '-c', placement[role], String(pid)], { stdio: 'ignore' });
}

/** The orchestrator generates the load, so it runs beside the helpers, off the proxies' CPU. */
export function pinOrchestrator(): void {
  pin(process.pid, 'helpers');
}

/** The command and arguments that start `argv` on the CPUs of `role`. */
export function placed(role: keyof Placement, argv: readonly string[]): { file: string; args: string[] } {
  const [file, ...args] = argv as [string, ...string[]];
  if (placement === undefined) return { file, args };
  return { file: 'taskset', args: ['-c', placement[role], file, ...args] };
}
