/**
 * Policy hot reload. Kubernetes mounts a ConfigMap as a directory whose
 * visible files are symlinks through `..data` into a timestamped directory;
 * an update writes a new timestamped directory, renames `..data_tmp` over
 * `..data` and deletes the old one. A watch on the file itself misses that
 * (its inode never changes, the link's target does), so the directory is
 * watched, bursts are coalesced, and the file is re-read through its resolved
 * path, which pins one whole version (the policy and files next to it).
 *
 * `fs.watch` is the fast path; a slow stat poll is the safety net for
 * volumes that deliver no events and for a directory that was deleted and
 * recreated (the old watch is then dead). The other files a version was
 * built from (the key files a policy names) are watched and polled the same
 * way, so editing one is as prompt as editing the policy. A candidate is loaded through the
 * caller's loader, applied only if valid and only if its digest differs from
 * the version in force; otherwise the last good version stays. Every outcome
 * is one log line and one `policyReload` channel message.
 */
import { policyReload, type PolicyReload } from '../telemetry/channels.ts';
import { log } from '../telemetry/log.ts';
import type { ConfigError } from '../config/policy/policy.ts';
import { Debouncer } from './debounce.ts';
import { DirectoryWatches } from './directory-watches.ts';
import { fingerprint } from './fingerprint.ts';

export type ReloadOutcome = PolicyReload['outcome'];

/** A file besides the policy that a version was built from, and its fingerprint taken before it was read. */
export interface WatchedFile {
  readonly path: string;
  readonly fingerprint: string;
}

/**
 * A loaded version. `digest` decides whether it is new: equal digests mean a
 * re-save, not a change, so it must cover everything the value was built
 * from (see policyLoader). `files` are the other files it was built from (or
 * failed on), watched from then on like the policy file itself.
 */
export type Candidate<T> =
  | { readonly ok: true; readonly value: T; readonly digest: string; readonly files?: readonly WatchedFile[] }
  | { readonly ok: false; readonly errors: readonly ConfigError[]; readonly files?: readonly WatchedFile[] };

/**
 * Loads and validates one version. `path` is the configured path with every
 * symlink resolved (when it resolves). `generation` is the generation this
 * version gets if applied: 0 for start(), then the generation in force plus
 * one, so it increases by exactly one per applied version and a rejected or
 * unchanged candidate's number is offered again to the next one. Should not
 * throw; if it does, the candidate is rejected without the exception's text.
 */
export type PolicyLoader<T> = (path: string, generation: number) => Promise<Candidate<T>>;

export interface AppliedVersion<T> {
  readonly value: T;
  readonly digest: string;
  readonly generation: number;
}

export interface PolicyWatchOptions<T> {
  /** The policy file as configured, inside the mounted directory. */
  readonly path: string;
  readonly load: PolicyLoader<T>;
  /**
   * Called with each newly applied version, never for start()'s and never
   * after close() began. Throwing rejects the version (the previous one stays).
   */
  readonly onApply: (applied: AppliedVersion<T>) => void;
  /** Quiet time that ends a burst of changes. Default 200 ms; a burst is cut after ten times this. */
  readonly debounceMs?: number;
  /** Stat poll period, the fallback when no events arrive. Default 10 s. */
  readonly pollIntervalMs?: number;
  /** False: poll only, for volumes where inotify delivers nothing. Default true. */
  readonly fsWatch?: boolean;
}

export interface PolicyWatcher<T> {
  /**
   * Starts watching, then loads generation 0 (watching first, so a change
   * during the first load is not missed). On failure the watcher has closed
   * itself and the result says why.
   */
  start(): Promise<Candidate<T>>;
  /** The version in force: start()'s, or the latest applied. */
  current(): AppliedVersion<T> | undefined;
  /** Stops watching and polling and waits for a load in flight; its result is dropped. */
  close(): Promise<void>;
}

const DEFAULT_DEBOUNCE_MS = 200;
const DEFAULT_POLL_INTERVAL_MS = 10_000;
const MAX_BURST_FACTOR = 10;
const CLOSED_DURING_START: Candidate<never> = Object.freeze({
  ok: false,
  errors: Object.freeze([{ path: '', message: 'watch: closed before the first load finished' }]),
});

export function watchPolicy<T>(opts: PolicyWatchOptions<T>): PolicyWatcher<T> {
  return new DirectoryPolicyWatcher(opts);
}

class DirectoryPolicyWatcher<T> implements PolicyWatcher<T> {
  readonly #path: string;
  readonly #load: PolicyLoader<T>;
  readonly #onApply: (applied: AppliedVersion<T>) => void;
  readonly #pollIntervalMs: number;
  /** Undefined: poll only. */
  readonly #watches: DirectoryWatches | undefined;
  readonly #debouncer: Debouncer;
  #state: 'new' | 'running' | 'closed' = 'new';
  /** The other files the latest read was built from, each with its fingerprint from before that read. */
  #files: ReadonlyMap<string, string> = new Map();
  #pollTimer: NodeJS.Timeout | undefined;
  #inflight: Promise<void> | undefined;
  /** A change was noticed while a load ran: load again afterwards. */
  #dirty = false;
  /** Fingerprint taken just before the latest read. */
  #seen: string | undefined;
  /** The fingerprint the poll asked a load for since the latest read, so it asks once, not on every tick until the load. */
  #polled: string | undefined;
  #applied: AppliedVersion<T> | undefined;

  constructor(opts: PolicyWatchOptions<T>) {
    if (typeof opts.path !== 'string' || opts.path === '')
      throw new TypeError('PolicyWatcher: path must be a non-empty string');
    const debounceMs = opts.debounceMs ?? DEFAULT_DEBOUNCE_MS;
    const pollIntervalMs = opts.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    for (const [name, v] of [
      ['debounceMs', debounceMs],
      ['pollIntervalMs', pollIntervalMs],
    ] as const) {
      if (!(Number.isSafeInteger(v) && v > 0)) throw new TypeError(`PolicyWatcher: ${name} must be a positive integer`);
    }
    this.#path = opts.path;
    this.#load = opts.load;
    this.#onApply = opts.onApply;
    this.#pollIntervalMs = pollIntervalMs;
    this.#watches = (opts.fsWatch ?? true) ? new DirectoryWatches(() => this.#trigger()) : undefined;
    this.#debouncer = new Debouncer(() => this.#onSettled(), debounceMs, debounceMs * MAX_BURST_FACTOR);
  }

  async start(): Promise<Candidate<T>> {
    if (this.#state !== 'new') throw new Error('PolicyWatcher: start() may be called once, before close()');
    this.#state = 'running';
    await this.#watches?.sync(this.#watched());
    if (this.#state !== 'running') return CLOSED_DURING_START;
    this.#schedulePoll();
    const first = await this.#exclusive(() => this.#read(0));
    if (this.#state !== 'running') return CLOSED_DURING_START;
    if (!first.ok) {
      await this.close();
      return first;
    }
    this.#applied = Object.freeze({ value: first.value, digest: first.digest, generation: 0 });
    return first;
  }

  current(): AppliedVersion<T> | undefined {
    return this.#applied;
  }

  async close(): Promise<void> {
    this.#state = 'closed';
    this.#debouncer.cancel();
    clearTimeout(this.#pollTimer);
    this.#pollTimer = undefined;
    this.#watches?.close();
    await this.#inflight;
  }

  #trigger(): void {
    if (this.#state === 'running') this.#debouncer.schedule();
  }

  #onSettled(): void {
    if (this.#state !== 'running') return;
    if (this.#inflight !== undefined) {
      this.#dirty = true;
      return;
    }
    void this.#exclusive(() => this.#reload());
  }

  /** Runs one load at a time; a change noticed meanwhile earns one more load afterwards. */
  async #exclusive<R>(fn: () => Promise<R>): Promise<R> {
    const run = fn();
    this.#inflight = run.then(
      () => undefined,
      () => undefined,
    );
    try {
      return await run;
    } finally {
      this.#inflight = undefined;
      if (this.#dirty && this.#state === 'running') {
        this.#dirty = false;
        this.#debouncer.schedule();
      }
    }
  }

  async #reload(): Promise<void> {
    const started = performance.now();
    const generation = (this.#applied?.generation ?? 0) + 1;
    const candidate = await this.#read(generation);
    if (this.#state !== 'running') return;
    if (!candidate.ok) {
      // A version replaced while it loaded (its timestamped directory may
      // even be gone) is not worth a rejection: load what replaced it.
      if ((await fingerprint(this.#path)).key !== this.#seen) {
        this.#dirty = true;
        return;
      }
      if (this.#state !== 'running') return;
      this.#reject(candidate.errors, started);
      return;
    }
    if (candidate.digest === this.#applied?.digest) {
      this.#report('unchanged', started);
      return;
    }
    const applied: AppliedVersion<T> = Object.freeze({ value: candidate.value, digest: candidate.digest, generation });
    try {
      this.#onApply(applied);
    } catch {
      this.#reject([{ path: '', message: 'apply: the onApply listener threw' }], started);
      return;
    }
    this.#applied = applied;
    this.#report('applied', started);
  }

  async #read(generation: number): Promise<Candidate<T>> {
    // Taken before reading: a change after this point differs from it, so
    // the poll notices it even if this read already saw the old version.
    const fp = await fingerprint(this.#path);
    const before = await Promise.all(
      [...this.#files.keys()].map(async (path) => [path, (await fingerprint(path)).key] as const),
    );
    this.#seen = fp.key;
    this.#polled = undefined;
    let candidate: Candidate<T>;
    try {
      candidate = await this.#load(fp.resolved ?? this.#path, generation);
    } catch {
      candidate = { ok: false, errors: [{ path: '', message: 'load: the policy loader failed' }] };
    }
    // The files this version names, fingerprinted by the loader before it read them; a version
    // that names none it could say keeps the files watched so far, so fixing one is noticed.
    this.#files =
      candidate.files !== undefined
        ? new Map(candidate.files.map((f) => [f.path, f.fingerprint]))
        : candidate.ok
          ? new Map()
          : new Map(before);
    await this.#watches?.sync(this.#watched());
    return candidate;
  }

  /** The policy file and the files the latest read was built from. */
  #watched(): string[] {
    return [this.#path, ...this.#files.keys()];
  }

  #reject(errors: readonly ConfigError[], started: number): void {
    const first = errors[0];
    log.warn('policy reload rejected; the last good policy stays in force', {
      error_path: first?.path || '/',
      error_rule: first?.message ?? 'invalid',
      errors: errors.length,
      generation: this.#applied?.generation,
      digest: this.#applied?.digest,
    });
    this.#publish('rejected', started);
  }

  #report(outcome: 'applied' | 'unchanged', started: number): void {
    const fields = {
      generation: this.#applied?.generation,
      digest: this.#applied?.digest,
      duration_ms: Math.round(performance.now() - started),
    };
    if (outcome === 'applied') log.info('policy reloaded', fields);
    else log.info('policy re-read; content unchanged, nothing applied', fields);
    this.#publish(outcome, started);
  }

  #publish(outcome: ReloadOutcome, started: number): void {
    if (!policyReload.hasSubscribers) return;
    const message: PolicyReload = {
      outcome,
      generation: this.#applied?.generation ?? 0,
      durationSeconds: (performance.now() - started) / 1000,
    };
    policyReload.publish(message);
  }

  #schedulePoll(): void {
    this.#pollTimer = setTimeout(() => void this.#poll(), this.#pollIntervalMs);
  }

  async #poll(): Promise<void> {
    this.#pollTimer = undefined;
    const files = [...this.#files];
    const [fp, now] = await Promise.all([
      fingerprint(this.#path),
      Promise.all(files.map(([path]) => fingerprint(path))),
    ]);
    // Also replaces a watch whose directory died or was recreated.
    await this.#watches?.sync(this.#watched());
    if (this.#state !== 'running') return;
    const key = [fp.key, ...now.map((f) => f.key)].join('\n');
    const changed = fp.key !== this.#seen || files.some(([, seen], i) => now[i]?.key !== seen);
    if (changed && key !== this.#polled) {
      this.#polled = key;
      this.#trigger();
    }
    this.#schedulePoll();
  }
}
