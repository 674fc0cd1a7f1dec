import { channel } from 'node:diagnostics_channel';

/**
 * Channels telemetry listens on beyond channels.ts, named here so publishers
 * elsewhere (policy watcher, grant store, discovery) and the subscribers in
 * this folder agree on one name and shape. Publish only after checking
 * `hasSubscribers`; messages carry counts, codes and timings, never content.
 */

/** The grant store confirmed the control revision in force (publish on every confirmation, not only on change). */
export interface GrantState {
  readonly revision: number;
  /** When the store last confirmed it, in ms since the epoch. */
  readonly confirmedAtMs: number;
}
export const grantState = channel('toolgate:grants:state');

/** One grant snapshot lookup. */
export interface SnapshotLookup {
  readonly result: 'hit' | 'miss';
}
export const snapshotLookup = channel('toolgate:grants:snapshot');

/** One policy reload attempt, as src/config/reload/watch.ts publishes it. */
export interface PolicyReloadAttempt {
  readonly outcome: 'applied' | 'rejected' | 'unchanged';
  readonly generation?: number;
  readonly durationSeconds?: number;
}
export const policyReload = channel('toolgate:policy:reload');

/** One audit event: written to the sink's queue, or dropped because the queue was full. */
export interface AuditRecord {
  readonly outcome: 'queued' | 'dropped';
}
export const auditRecord = channel('toolgate:audit');
