/**
 * One replica's view of the control revision, and whether it may still be
 * trusted. Pub/sub notices make changes visible at once; a periodic read is
 * what confirms the view. A view not confirmed within the staleness bound is
 * no view at all: `revision()` turns undefined and callers fail closed until a
 * read succeeds again, which needs no restart.
 *
 * Confirmation is dated from when the read was sent, not when it returned, so
 * a slow reply never stretches the bound. Notices and reads travel on
 * different connections and may arrive out of order, so a read lower than the
 * view is believed only when the next read says the same (Redis lost its data
 * and restarted): any change, up or down, is reported to listeners.
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
}

export class RevisionWatcher {
  readonly #read: () => Promise<RevisionRead>;
  readonly #stalenessMs: number;
  readonly #checkIntervalMs: number;
  readonly #now: () => number;
  readonly #listeners = new Set<(revision: number) => void>();
  #current: number | undefined;
  #confirmedAt = Number.NEGATIVE_INFINITY;
  #lowerOnce = false;
  #inFlight: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #checks = 0;
  #checkFailures = 0;
  #changes = 0;

  constructor(options: RevisionWatcherOptions) {
    this.#read = options.read;
    this.#stalenessMs = options.stalenessMs;
    this.#checkIntervalMs = options.checkIntervalMs;
    this.#now = options.now ?? Date.now;
  }

  /** The revision this replica trusts now; undefined when unconfirmed for longer than the staleness bound. */
  revision(): number | undefined {
    if (this.#current === undefined || this.#now() - this.#confirmedAt > this.#stalenessMs) return undefined;
    return this.#current;
  }

  /** The last revision seen, trusted or not. */
  lastSeen(): number | undefined {
    return this.#current;
  }

  onChange(listener: (revision: number) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A revision announced by Redis (pub/sub) or read alongside rows: believed when higher. */
  notify(revision: number): void {
    if (this.#current !== undefined && revision > this.#current) this.#set(revision);
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
    return { checks: this.#checks, checkFailures: this.#checkFailures, changes: this.#changes };
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
      return;
    }
    const v = r.revision;
    if (this.#current !== undefined && v < this.#current && !this.#lowerOnce) {
      this.#lowerOnce = true;
      return;
    }
    this.#lowerOnce = false;
    if (v !== this.#current) this.#set(v);
    this.#confirmedAt = Math.max(this.#confirmedAt, sentAt);
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
