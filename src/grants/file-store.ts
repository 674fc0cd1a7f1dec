/** The embedded grant store: the policy file's rows, in process, for one replica. */
import { randomInt } from 'node:crypto';
import type { Principal } from '../auth/types.ts';
import { l1Key } from './subject-key.ts';
import { DEFAULT_L1_MAX_ENTRIES, Lru } from '../bounded/lru.ts';
import { createFileSource } from './sources/file.ts';
import type { FileGrantSource } from './sources/file.ts';
import { snapshotFor } from './snapshot.ts';
import type { SnapshotResult } from './types.ts';
import type { GrantRow } from '../config/policy/grant-row.ts';

import type { GrantStore } from './store.ts';

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
      for (const listener of Array.from(listeners)) {
        try {
          listener(revision);
        } catch {
          // One failing subscriber must not keep the others on an old revision.
        }
      }
      return revision;
    },
    stats: () => ({
      l1Hits,
      l1Misses,
      l2Hits: 0,
      l2Misses: 0,
      staleFailures,
      storageFailures: 0,
      malformedFailures: 0,
      revisionChanges,
      l1Entries: l1.size,
    }),
    close: () => Promise.resolve(),
  };
}
