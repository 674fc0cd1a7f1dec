/**
 * One replica's view of the control revision, and whether it may still be
 * trusted. Pub/sub notices make changes visible at once; a periodic read is
 * what confirms the view. A view not confirmed within the staleness bound is
 * no view at all: `revision()` turns undefined and callers fail closed until a
 * read succeeds again, which needs no restart.
 *
 * Confirmation is dated from when the read was sent, not when it returned, so
 * a slow reply never stretches the bound. A node that says it is not the
 * master confirms nothing, and withdraws the confirmation at once.
 *
 * The revision only ever grows. Reads travel on one connection, one at a
 * time, so a read lower than one already confirmed (a missing key reads as 0)
 * means the store lost data, or a failover promoted a replica that was
 * behind: a store fault. Believing it would put an older or empty grant set in
 * force, which callers would take for "not granted". During a fault nothing is
 * trusted; it ends when a read returns at least the revision confirmed before
 * (grants written again, or `toolgate grants revision --reset`).
 */
import type { RevisionRead } from './sources/types.ts';

export interface RevisionWatcherOptions {
  readonly read: () => Promise<RevisionRead>;
  readonly stalenessMs: number;
  readonly checkIntervalMs: number;
  readonly now?: () => number;
}

export interface RevisionWatcherStats {
  readonly checks: number;
  readonly checkFailures: number;
  readonly changes: number;
  /** Times a read went below the confirmed revision. */
  readonly faults: number;
}

/** What the last read said about the store. */
export type StoreHealth = 'ok' | 'unreachable' | 'not_master' | 'fault';

export interface HealthChange {
  readonly state: StoreHealth;
  /** The revision the read returned, when it returned one. */
  readonly read: number | undefined;
  /** The highest revision confirmed so far. */
  readonly confirmed: number | undefined;
}

export class RevisionWatcher {
  readonly #read: () => Promise<RevisionRead>;
  readonly #stalenessMs: number;
  readonly #checkIntervalMs: number;
  readonly #now: () => number;
  readonly #listeners = new Set<(revision: number) => void>();
  readonly #healthListeners = new Set<(change: HealthChange) => void>();
  #current: number | undefined;
  #confirmed: number | undefined;
  #confirmedAt = Number.NEGATIVE_INFINITY;
  #health: StoreHealth | undefined;
  #lowerOnce = false;
  #inFlight: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #checks = 0;
  #checkFailures = 0;
  #changes = 0;
  #faults = 0;

  constructor(options: RevisionWatcherOptions) {
    this.#read = options.read;
    this.#stalenessMs = options.stalenessMs;
    this.#checkIntervalMs = options.checkIntervalMs;
    this.#now = options.now ?? Date.now;
  }

  /** The revision this replica trusts now; undefined when unconfirmed for longer than the staleness bound, or during a fault. */
  revision(): number | undefined {
    if (this.#current === undefined || this.#health === 'fault' || this.#now() - this.#confirmedAt > this.#stalenessMs)
      return undefined;
    return this.#current;
  }

  /** When the revision was last confirmed (ms since the epoch), or undefined before the first confirmation. */
  confirmedAt(): number | undefined {
    return Number.isFinite(this.#confirmedAt) ? this.#confirmedAt : undefined;
  }

  /** The last revision seen, trusted or not. */
  lastSeen(): number | undefined {
    return this.#current;
  }

  onChange(listener: (revision: number) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Told once per transition between health states (the first read is a transition too). */
  onHealth(listener: (change: HealthChange) => void): () => void {
    this.#healthListeners.add(listener);
    return () => this.#healthListeners.delete(listener);
  }

  /** A revision announced by Redis (pub/sub) or read alongside rows: believed when higher. */
  notify(revision: number): void {
    if (this.#current !== undefined && this.#health !== 'fault' && revision > this.#current) this.#set(revision);
  }

  /** Reads the revision once; concurrent calls share the read in flight. */
  check(): Promise<void> {
    this.#inFlight ??= this.#checkOnce().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.check(), this.#checkIntervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  stats(): RevisionWatcherStats {
    return { checks: this.#checks, checkFailures: this.#checkFailures, changes: this.#changes, faults: this.#faults };
  }

  async #checkOnce(): Promise<void> {
    const sentAt = this.#now();
    this.#checks++;
    let r: RevisionRead;
    try {
      r = await this.#read();
    } catch {
      r = { ok: false, code: 'grants_unavailable' };
    }
    if (!r.ok) {
      this.#checkFailures++;
      if (r.reason === 'not_master') {
        this.#confirmedAt = Number.NEGATIVE_INFINITY;
        this.#report('not_master', undefined);
      } else if (this.#health !== 'fault') {
        this.#report('unreachable', undefined);
      }
      return;
    }
    const v = r.revision;
    if (this.#confirmed !== undefined && v < this.#confirmed) {
      if (this.#health !== 'fault') this.#faults++;
      this.#report('fault', v);
      return;
    }
    const recovering = this.#health === 'fault';
    // Above everything confirmed but below a notice: the read may have been
    // sent before the change it missed; believed when the next read agrees.
    if (!recovering && this.#current !== undefined && v < this.#current && !this.#lowerOnce) {
      this.#lowerOnce = true;
      return;
    }
    this.#lowerOnce = false;
    this.#confirmed = v;
    this.#confirmedAt = Math.max(this.#confirmedAt, sentAt);
    this.#report('ok', v);
    // After a fault the rows at this number may differ from the ones cached
    // under it before: listeners drop everything either way.
    if (recovering || v !== this.#current) this.#set(v);
  }

  #report(state: StoreHealth, read: number | undefined): void {
    if (state === this.#health) return;
    this.#health = state;
    const change: HealthChange = { state, read, confirmed: this.#confirmed };
    for (const listener of this.#healthListeners) {
      try {
        listener(change);
      } catch {
        // A failing observer must not change what the store trusts.
      }
    }
  }

  #set(revision: number): void {
    this.#current = revision;
    this.#changes++;
    for (const listener of Array.from(this.#listeners)) {
      try {
        listener(revision);
      } catch {
        // One failing subscriber must not keep the others on an old revision.
      }
    }
  }
}
