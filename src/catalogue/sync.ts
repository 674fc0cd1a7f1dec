import type { Dispatcher } from 'undici';
import { log } from '../telemetry/log.ts';
import { backoffDelay } from './backoff.ts';
import { buildCatalogue, type BuildStats, type Catalogue } from './catalogue.ts';
import { DEFAULT_WALK_LIMITS, walkPages, type WalkLimits } from './paginate.ts';
import { failureCode, openLink, type UpstreamLink } from './upstream.ts';

export interface CatalogueSyncOptions {
  /** The upstream MCP endpoint (origin and path). */
  readonly url: URL;
  /** Re-read the whole list this often even without a change notification. */
  readonly refreshIntervalMs: number;
  /** Sent on every request to the upstream (e.g. its own credentials). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Carries the link's requests (the sidecar's upstream pool). Default: undici's global dispatcher. */
  readonly dispatcher?: Dispatcher;
  /** Called with each catalogue whose digest differs from the previous one, the first included. */
  readonly onChange?: (c: Catalogue) => void;
  /** Per JSON-RPC request (connect probe, each page). Default 10 s. */
  readonly requestTimeoutMs?: number;
  /**
   * Least time between two syncs started by refresh(), and between the start
   * of any sync and one a notification asks for. Default 1 s.
   */
  readonly minRefreshGapMs?: number;
  /** First retry delay after a failed sync, doubling up to retryMaxMs. Defaults 500 ms and 30 s. */
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
  readonly limits?: WalkLimits;
}

/** Counts for metrics and health; no content. */
export interface SyncStats {
  readonly syncs: number;
  readonly failures: number;
  readonly consecutiveFailures: number;
  /** Closed code of the latest failure, e.g. `http_503`, `cursor_repeated`. */
  readonly lastFailure: string | undefined;
  readonly lastBuild: BuildStats | undefined;
  readonly era: 'legacy' | 'modern' | undefined;
}

const DEFAULTS = { requestTimeoutMs: 10_000, minRefreshGapMs: 1_000, retryBaseMs: 500, retryMaxMs: 30_000 };

/**
 * Keeps toolgate's own copy of the upstream's tool catalogue. One sync reads
 * every page of `tools/list` over toolgate's own MCP connection; syncs run at
 * start (retrying until one succeeds), on `notifications/tools/list_changed`,
 * on an interval and on refresh(). At most one sync is in flight: requests
 * arriving meanwhile share it, and a change notification that arrives during
 * a sync earns one more sync afterwards (the running one may have read the
 * list before the change). A failed sync keeps the last good catalogue and
 * retries with backoff; the connection is rebuilt on the next attempt.
 */
export class CatalogueSync {
  readonly #opts: Required<Omit<CatalogueSyncOptions, 'headers' | 'onChange' | 'dispatcher'>> &
    Pick<CatalogueSyncOptions, 'headers' | 'onChange' | 'dispatcher'>;
  readonly #abort = new AbortController();
  #current: Catalogue | undefined;
  #link: UpstreamLink | undefined;
  #inflight: Promise<Catalogue | undefined> | undefined;
  #again = false;
  #lastStartAt = Number.NEGATIVE_INFINITY;
  #lastOnDemandAt = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | undefined;
  #timerDueAt = Number.POSITIVE_INFINITY;
  #ready: PromiseWithResolvers<void> | undefined;
  #started = false;
  #closed = false;
  #stats: SyncStats = {
    syncs: 0,
    failures: 0,
    consecutiveFailures: 0,
    lastFailure: undefined,
    lastBuild: undefined,
    era: undefined,
  };

  constructor(opts: CatalogueSyncOptions) {
    const o = { ...DEFAULTS, limits: DEFAULT_WALK_LIMITS, ...opts };
    for (const k of ['refreshIntervalMs', 'requestTimeoutMs', 'retryBaseMs', 'retryMaxMs'] as const) {
      if (!(Number.isSafeInteger(o[k]) && o[k] > 0))
        throw new TypeError(`CatalogueSync: ${k} must be a positive integer`);
    }
    if (!(Number.isSafeInteger(o.minRefreshGapMs) && o.minRefreshGapMs >= 0))
      throw new TypeError('CatalogueSync: minRefreshGapMs must be a whole number');
    if (o.url.protocol !== 'http:' && o.url.protocol !== 'https:')
      throw new TypeError('CatalogueSync: url must be http or https');
    this.#opts = Object.freeze(o);
  }

  /**
   * Begins syncing. Resolves once a first catalogue exists, however many
   * attempts that takes; rejects only if close() comes first.
   */
  start(): Promise<void> {
    if (this.#ready === undefined) {
      this.#ready = Promise.withResolvers<void>();
      if (this.#closed) this.#ready.reject(new Error('CatalogueSync closed before a catalogue was read'));
      else if (this.#current !== undefined) this.#ready.resolve();
    }
    if (!this.#started && !this.#closed) {
      this.#started = true;
      void this.#sync();
    }
    return this.#ready.promise;
  }

  current(): Catalogue | undefined {
    return this.#current;
  }

  stats(): SyncStats {
    return this.#stats;
  }

  /**
   * Asks for a sync now, e.g. because a call named a tool the catalogue does
   * not know. Joins a sync in flight; otherwise, if a refresh() started a
   * sync less than minRefreshGapMs ago, answers with the current catalogue
   * without asking the upstream, so unknown-tool calls cannot hammer it.
   * Never rejects; a failed sync answers with the last good catalogue.
   */
  refresh(): Promise<Catalogue | undefined> {
    if (this.#closed) return Promise.resolve(this.#current);
    if (this.#inflight !== undefined) return this.#inflight;
    const now = performance.now();
    if (now - this.#lastOnDemandAt < this.#opts.minRefreshGapMs) return Promise.resolve(this.#current);
    this.#lastOnDemandAt = now;
    return this.#sync();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#clearTimer();
    this.#ready?.reject(new Error('CatalogueSync closed before a catalogue was read'));
    this.#abort.abort();
    const link = this.#link;
    this.#link = undefined;
    await link?.close();
    await this.#inflight;
  }

  #sync(): Promise<Catalogue | undefined> {
    if (this.#inflight !== undefined) return this.#inflight;
    this.#clearTimer();
    this.#lastStartAt = performance.now();
    const run = this.#syncOnce().then((fresh) => {
      // Cleared before anyone hears of the result, so a refresh() asked for
      // by a listener or by a start() waiter starts a new read.
      this.#inflight = undefined;
      if (fresh !== undefined && !this.#closed) this.#publish(fresh);
      this.#afterSync();
      return this.#current;
    });
    this.#inflight = run;
    return run;
  }

  /** Never rejects: every failure is counted, logged by code, and retried later. */
  async #syncOnce(): Promise<Catalogue | undefined> {
    let pages = 0;
    try {
      if (this.#link === undefined) {
        // Callbacks that fire before the link is installed are ignored: the
        // list is read right after connecting anyway.
        let opened: UpstreamLink | undefined;
        opened = await openLink({
          url: this.#opts.url,
          headers: this.#opts.headers,
          dispatcher: this.#opts.dispatcher,
          requestTimeoutMs: this.#opts.requestTimeoutMs,
          signal: this.#abort.signal,
          onListChanged: () => this.#onChangeHint(opened),
          onTrouble: () => this.#onChangeHint(opened),
          onLost: () => this.#onLost(opened),
        });
        if (this.#closed) {
          await opened.close();
          return undefined;
        }
        this.#link = opened;
      }
      const link = this.#link;
      const walk = await walkPages((cursor) => link.listPage(cursor), this.#opts.limits);
      pages = walk.pages;
      if (this.#closed) return undefined;
      if (!walk.ok) {
        this.#fail(walk.code === 'request_failed' ? failureCode(walk.error) : walk.code, pages);
        return undefined;
      }
      return this.#succeed(walk.entries, pages, link.era);
    } catch (e) {
      if (!this.#closed) this.#fail(failureCode(e), pages);
      return undefined;
    }
  }

  #succeed(entries: readonly unknown[], pages: number, era: 'legacy' | 'modern'): Catalogue {
    const { catalogue, stats } = buildCatalogue(entries, Date.now());
    const previous = this.#current;
    const before = this.#stats;
    if (before.consecutiveFailures > 0)
      log.info('catalogue sync recovered', { after_failures: before.consecutiveFailures });
    const skipped = stats.malformed + stats.duplicates + stats.undigestable;
    const skippedBefore =
      before.lastBuild === undefined
        ? 0
        : before.lastBuild.malformed + before.lastBuild.duplicates + before.lastBuild.undigestable;
    if (skipped > 0 && (skipped !== skippedBefore || catalogue.digest !== previous?.digest)) {
      log.warn('catalogue entries skipped', {
        malformed: stats.malformed,
        duplicates: stats.duplicates,
        undigestable: stats.undigestable,
      });
    }
    this.#stats = { ...before, syncs: before.syncs + 1, consecutiveFailures: 0, lastBuild: stats, era };
    if (catalogue.digest !== previous?.digest)
      log.info('catalogue updated', { digest: catalogue.digest, tools: stats.kept, pages, era });
    return catalogue;
  }

  #publish(catalogue: Catalogue): void {
    const previous = this.#current;
    this.#current = catalogue;
    this.#ready?.resolve();
    if (catalogue.digest === previous?.digest) return;
    try {
      this.#opts.onChange?.(catalogue);
    } catch {
      log.warn('catalogue onChange listener threw', { digest: catalogue.digest });
    }
  }

  #fail(code: string, pages: number): void {
    const s = this.#stats;
    this.#stats = { ...s, failures: s.failures + 1, consecutiveFailures: s.consecutiveFailures + 1, lastFailure: code };
    log.warn('catalogue sync failed', {
      code,
      pages,
      consecutive_failures: s.consecutiveFailures + 1,
      have_catalogue: this.#current !== undefined,
    });
    // Whatever broke, the next attempt starts from a fresh connection: a 2025
    // session may have expired, and a stale link would fail the same way.
    const link = this.#link;
    this.#link = undefined;
    void link?.close();
  }

  #afterSync(): void {
    // A listener may already have started the next sync; its end schedules.
    if (this.#closed || this.#inflight !== undefined) return;
    if (this.#again) {
      this.#again = false;
      this.#soon();
      return;
    }
    const n = this.#stats.consecutiveFailures;
    this.#schedule(
      n > 0 ? backoffDelay(n, this.#opts.retryBaseMs, this.#opts.retryMaxMs) : this.#opts.refreshIntervalMs,
    );
  }

  /** A change notification, or trouble on the link: either way, read the list again soon. */
  #onChangeHint(link: UpstreamLink | undefined): void {
    if (this.#closed || link === undefined || link !== this.#link) return;
    if (this.#inflight !== undefined) this.#again = true;
    else this.#soon();
  }

  /** The notification channel dropped: changes may have been missed, so reconnect and re-read. */
  #onLost(link: UpstreamLink | undefined): void {
    if (this.#closed || link === undefined || link !== this.#link) return;
    this.#link = undefined;
    void link.close();
    if (this.#inflight !== undefined) this.#again = true;
    else this.#soon();
  }

  /** A sync as soon as the gap since the last start allows, unless a timer is already due sooner. */
  #soon(): void {
    const wait = Math.max(0, this.#lastStartAt + this.#opts.minRefreshGapMs - performance.now());
    if (wait === 0) void this.#sync();
    else this.#schedule(wait, true);
  }

  #schedule(ms: number, keepSooner = false): void {
    const due = performance.now() + ms;
    if (keepSooner && this.#timer !== undefined && this.#timerDueAt <= due) return;
    this.#clearTimer();
    this.#timerDueAt = due;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timerDueAt = Number.POSITIVE_INFINITY;
      void this.#sync();
    }, ms);
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDueAt = Number.POSITIVE_INFINITY;
  }
}
