import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { heapTrim } from './channels.ts';

/**
 * Returning an idle sidecar's spare heap to the system.
 *
 * V8 grows the young generation (up to 2 × 16 MB semi-spaces) while most of
 * what it allocates survives, and loading modules at start-up is exactly
 * that; it shrinks it again only after a full collection at a low allocation
 * rate, which an idle process never runs. With a policy, a freshly ready
 * toolgate so holds ~25 MB of young generation and start-up garbage that it
 * will not touch until traffic comes, paid once per pod. Once the process has
 * been idle for a window after activity, one memory-reducing collection (V8's
 * "last resort" flavour, the one behind `LowMemoryNotification`: the young
 * generation back to its minimum, old-space pages released) gives it back.
 * Envoy's overload manager `shrink_heap` action is the same idea for its
 * allocator. Traffic regrows the young generation as it needs.
 */

/** Share of one CPU below which a sample counts as idle: scrapes and probes fit under it, traffic does not. */
const IDLE_CPU_SHARE = 0.02;
/** Committed but unused heap below which a collection (tens of ms) is not worth running. */
const MIN_SLACK_BYTES = 4 * 1024 * 1024;

/**
 * Growth of the committed heap over one load above which the load's garbage
 * is given back at once rather than at the next idle window. More than a
 * grown young generation (32 MB at most) and more than loading a policy
 * normally takes; parsing a YAML static key file of 10,000 keys grows it by
 * ~170 MB, of which ~5 MB stay live.
 */
const LOAD_GROWTH_BYTES = 64 * 1024 * 1024;

type Gc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

export interface HeapTrimmer {
  stop(): void;
}

/**
 * The longest idle window the backoff below reaches: a pod idle this long
 * still gives its heap back, whatever its traffic did before.
 */
const MAX_IDLE_WINDOW_MS = 10 * 60 * 1000;

/**
 * Samples the process's CPU time every second (or every `idleMs`, if
 * shorter). Once no sample has been busy for the idle window and there was
 * activity since the last trim (the start-up counts), and the heap has slack,
 * trims it once. The window starts at `idleMs` and doubles with every trim,
 * up to MAX_IDLE_WINDOW_MS (or `idleMs`, if longer): traffic that comes back
 * after a trim pays to regrow the young generation and warm its code again
 * (on the bench's policy sidecar about twice the CPU per request over the next
 * few seconds, ~0.5 s of CPU in all), so a pod whose traffic keeps returning
 * trims ever more rarely, while a fresh pod still gives its start-up garbage
 * back after `idleMs`. The timer does not keep the process alive.
 */
export function startHeapTrim(idleMs: number): HeapTrimmer {
  const tickMs = Math.min(1000, idleMs);
  const maxWindowMs = Math.max(idleMs, MAX_IDLE_WINDOW_MS);
  let windowMs = idleMs;
  let gc: Gc | undefined;
  let activeSinceTrim = true;
  let busyAt = performance.now();
  let before = process.cpuUsage();
  const timer = setInterval(() => {
    const used = process.cpuUsage(before);
    before = process.cpuUsage();
    const now = performance.now();
    if (used.user + used.system > tickMs * 1000 * IDLE_CPU_SHARE) {
      activeSinceTrim = true;
      busyAt = now;
      return;
    }
    if (!activeSinceTrim || now - busyAt < windowMs) return;
    const heap = getHeapStatistics();
    if (heap.total_heap_size - heap.used_heap_size < MIN_SLACK_BYTES) return;
    gc ??= exposeGc();
    trim(gc, heap.total_heap_size);
    activeSinceTrim = false;
    windowMs = Math.min(maxWindowMs, windowMs * 2);
    // The trim's own CPU is not activity.
    before = process.cpuUsage();
  }, tickMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/**
 * `load`, followed by one memory-reducing collection when it grew the
 * committed heap by more than LOAD_GROWTH_BYTES (files a policy names are
 * bounded to a few MB, so such growth is the parse's garbage):
 * a large static key file's parse (a YAML document model for every entry)
 * leaves V8's heap grown to its peak, and a sidecar under load never falls
 * idle for the idle trim to give it back. The collection holds the event
 * loop for tens of milliseconds, after a load that held it far longer.
 */
export function trimAfterLoad<A extends unknown[], R>(load: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  let gc: Gc | undefined;
  return async (...args) => {
    const before = getHeapStatistics().total_heap_size;
    const result = await load(...args);
    const after = getHeapStatistics().total_heap_size;
    if (after - before > LOAD_GROWTH_BYTES) {
      gc ??= exposeGc();
      trim(gc, after);
    }
    return result;
  };
}

function trim(gc: Gc, totalBefore: number): void {
  const started = performance.now();
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  const durationSeconds = (performance.now() - started) / 1000;
  if (heapTrim.hasSubscribers) {
    heapTrim.publish({
      releasedBytes: Math.max(0, totalBefore - getHeapStatistics().total_heap_size),
      durationSeconds,
    });
  }
}

/**
 * V8's `gc` function without `--expose-gc` on the command line, which the
 * image's and every operator's command line would otherwise need: the flag
 * is set just long enough for a fresh context to be created with `gc` in it.
 */
function exposeGc(): Gc {
  const own = (globalThis as { gc?: unknown }).gc;
  if (typeof own === 'function') return own as Gc;
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as Gc;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
