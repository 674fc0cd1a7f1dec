import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = clockTicks();

/**
 * CPU time a process has used so far, in microseconds, from /proc. Primary
 * source: the scheduler's run time of every thread (`/proc/<pid>/task/<tid>/schedstat`,
 * nanoseconds, so a 2-second run at 1,000 req/s still resolves well under
 * 1%); fallback: user + system time from `/proc/<pid>/stat`, which Linux
 * reports in clock ticks (10 ms). Node's threads (main, V8 platform, libuv
 * pool) live as long as the process, so no thread's time is lost by exiting.
 * Undefined when the process is gone or /proc is not Linux's.
 */
export function cpuMicros(pid: number): number | undefined {
  return schedMicros(pid) ?? statMicros(pid);
}

function schedMicros(pid: number): number | undefined {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  let ns = 0;
  for (const tid of tids) {
    try {
      const onCpu = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      if (!Number.isFinite(onCpu)) return undefined;
      ns += onCpu;
    } catch {
      // A thread that ended between the listing and the read has nothing left to count.
    }
  }
  return ns / 1000;
}

function statMicros(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses; fields after
  // the last ')' are fixed: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return ((utime + stime) * 1e6) / TICKS_PER_SECOND;
}

/** Resident set size in MB (VmRSS of /proc/<pid>/status); undefined when the process is gone. */
export function rssMb(pid: number): number | undefined {
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

function clockTicks(): number {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
}

/**
 * `roots` and every process descending from them, from the parent pids in
 * /proc: a peer made of several processes (a master and its forked workers,
 * a database and the backends it forks per connection). Read before and after
 * a run, never during one. A process that exits between the two readings takes
 * its CPU time with it, so a peer that recycles workers mid-run reads low.
 */
export function processTree(roots: readonly number[]): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [...roots];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Field 4 (ppid) follows the state, after the command name's closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Gone between the listing and the read.
    }
  }
  const out: number[] = [];
  const queue = [...roots];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}
