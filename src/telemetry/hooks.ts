import { channel } from 'node:diagnostics_channel';

/**
 * Channels telemetry listens on beyond channels.ts, named here so publishers
 * elsewhere (policy watcher, grant store, discovery) and the subscribers in
 * this folder agree on one name and shape. Publish only after checking
 * `hasSubscribers`; messages carry counts, codes and timings, never content.
 */

/** The control revision in force and its freshness, as the grant store reports it. */
export interface GrantState {
  /** Undefined while the store trusts none (the gauge keeps the last one). */
  readonly revision: number | undefined;
  /** When the store last confirmed it, in ms since the epoch; undefined when it is always current (grants from the policy file). */
  readonly confirmedAtMs: number | undefined;
}
export const grantState = channel('toolgate:grants:state');

/** The shared grant store changed health: ok, unreachable, not_master (answered by a replica) or fault (revision went backwards). */
export interface GrantStoreHealth {
  readonly state: 'ok' | 'unreachable' | 'not_master' | 'fault';
}
export const grantStoreHealth = channel('toolgate:grants:health');

/** One grant snapshot lookup. */
export interface SnapshotLookup {
  readonly result: 'hit' | 'miss';
}
export const snapshotLookup = channel('toolgate:grants:snapshot');

/** One policy reload attempt, as src/config/watch.ts publishes it. */
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
