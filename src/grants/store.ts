/**
 * The grant store's contract: the request path's only way to grants. A snapshot comes
 * back synchronously whenever this replica already holds it for the revision
 * it trusts, so the hot path does not wait on storage; anything that cannot be
 * confirmed as current fails closed as `grants_unavailable`. Never throws.
 *
 * Two implementations: the embedded default (`file-store.ts`: the policy
 * file's rows, in process, one replica) and the Redis store shared by
 * replicas (`redis-store.ts`).
 */
import type { Principal } from '../auth/types.ts';
import type { GrantRow } from '../config/policy/grant-row.ts';
import type { SnapshotResult } from './types.ts';

interface GrantStoreStats {
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
