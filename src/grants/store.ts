/**
 * The grant store: the request path's only way to grants. A snapshot comes
 * back synchronously whenever this replica already holds it for the revision
 * it trusts, so the hot path does not wait on storage; anything that cannot be
 * confirmed as current fails closed as `grants_unavailable`. Never throws.
 *
 * Two implementations: the embedded default here (the policy file's rows, in
 * process, one replica) and the Redis store shared by replicas
 * (`src/cache/redis-grant-store.ts`).
 */
import { randomInt } from 'node:crypto';
import type { Principal } from '../auth/types.ts';
import { l1Key } from '../cache/keys.ts';
import { DEFAULT_L1_MAX_ENTRIES, Lru } from '../cache/lru.ts';
import { createFileSource } from './sources/file.ts';
import type { FileGrantSource } from './sources/file.ts';
import { snapshotFor } from './snapshot.ts';
import type { GrantRow, SnapshotResult } from './types.ts';

export { createRedisGrantStore } from '../cache/redis-grant-store.ts';
export type { RedisGrantStoreOptions } from '../cache/redis-grant-store.ts';

export interface GrantStoreStats {
  readonly l1Hits: number;
  readonly l1Misses: number;
  readonly l2Hits: number;
  readonly l2Misses: number;
  /** Snapshots refused because the revision was not confirmed within the staleness bound. */
  readonly staleFailures: number;
  /** Snapshots refused because storage failed or timed out. */
  readonly storageFailures: number;
  /** Snapshots refused because stored data was malformed or oversized. */
  readonly malformedFailures: number;
  readonly revisionChanges: number;
  readonly l1Entries: number;
}

export interface GrantStore {
  /**
   * The principal's snapshot at the current revision: synchronous when this
   * replica holds it, a promise otherwise. Fails closed, never throws.
   */
  snapshot(principal: Principal): SnapshotResult | Promise<SnapshotResult>;
  /** Every row naming one tool (deny path: which scopes would grant it); undefined when unavailable. */
  rowsForTool(tool: string): Promise<readonly GrantRow[] | undefined>;
  /** The revision this replica trusts now, or undefined when it is stale or unconfirmed. */
  revision(): number | undefined;
  /**
   * When the revision in force was last confirmed (ms since the epoch);
   * undefined when the store is always current (in process) or never confirmed one.
   */
  confirmedAt(): number | undefined;
  /** Called after every revision change; returns an unsubscribe. */
  onRevision(listener: (revision: number) => void): () => void;
  stats(): GrantStoreStats;
  close(): Promise<void>;
}

export interface FileGrantStore extends GrantStore {
  /** In process, every snapshot is immediate. */
  snapshot(principal: Principal): SnapshotResult;
  /**
   * Puts new rows in force at the next revision and returns it; rows that are
   * not canonical are refused (undefined) and the rows in force stay.
   */
  replaceRows(rows: readonly GrantRow[]): number | undefined;
}

export interface FileGrantStoreOptions {
  readonly rows: readonly GrantRow[];
  /** Defaults to a random revision, stable for the life of the process and unlikely to match another process's. */
  readonly revision?: number;
  readonly l1MaxEntries?: number;
}

const UNAVAILABLE: SnapshotResult = Object.freeze({ ok: false, code: 'grants_unavailable' });

interface L1Entry {
  readonly revision: number;
  readonly result: SnapshotResult;
}

/**
 * The embedded default: without Redis, everything runs in process for one
 * replica. Invalid initial rows leave the store failing closed until
 * `replaceRows` succeeds.
 */
export function createFileGrantStore(options: FileGrantStoreOptions): FileGrantStore {
  let source: FileGrantSource | undefined = createFileSource(options.rows, options.revision ?? randomInt(1, 2 ** 31));
  const l1 = new Lru<string, L1Entry>(options.l1MaxEntries ?? DEFAULT_L1_MAX_ENTRIES);
  const listeners = new Set<(revision: number) => void>();
  let l1Hits = 0;
  let l1Misses = 0;
  let staleFailures = 0;
  let revisionChanges = 0;

  return {
    snapshot(principal) {
      if (source === undefined) {
        staleFailures++;
        return UNAVAILABLE;
      }
      const { rows, revision } = source.current();
      const key = l1Key(principal);
      const hit = l1.get(key);
      if (hit !== undefined && hit.revision === revision) {
        l1Hits++;
        return hit.result;
      }
      l1Misses++;
      const result = snapshotFor(rows, principal, revision);
      l1.set(key, { revision, result });
      return result;
    },
    rowsForTool(tool) {
      return Promise.resolve(source?.current().rows.filter((r) => r.tool === tool));
    },
    revision: () => source?.current().revision,
    confirmedAt: () => undefined,
    onRevision(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    replaceRows(rows) {
      let revision: number | undefined;
      if (source === undefined) {
        source = createFileSource(rows, options.revision ?? randomInt(1, 2 ** 31));
        revision = source?.current().revision;
      } else {
        revision = source.replace(rows);
      }
      if (revision === undefined) return undefined;
      l1.clear();
      revisionChanges++;
      for (const listener of [...listeners]) {
        try {
          listener(revision);
        } catch {
          // One failing subscriber must not keep the others on an old revision.
        }
      }
      return revision;
    },
    stats: () => ({
      l1Hits, l1Misses, l2Hits: 0, l2Misses: 0, staleFailures, storageFailures: 0, malformedFailures: 0,
      revisionChanges, l1Entries: l1.size,
    }),
    close: () => Promise.resolve(),
  };
}
