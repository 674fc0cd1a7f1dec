/**
 * Where grant rows come from. Every read returns the rows together with the
 * control revision they were read at, so a snapshot can never pair rows from
 * one revision with the number of another.
 */
import type { GrantRow } from '../../config/policy/grant-row.ts';

export type SourceRead =
  | { readonly ok: true; readonly rows: readonly GrantRow[]; readonly revision: number }
  | { readonly ok: false; readonly code: 'grants_unavailable' };

/**
 * `not_master`: the node answering is a replica (or was demoted), so what it
 * says about the revision may be behind the master's: it confirms nothing.
 */
export type RevisionRead =
  | { readonly ok: true; readonly revision: number }
  | { readonly ok: false; readonly code: 'grants_unavailable'; readonly reason?: 'not_master' };

export interface GrantSource {
  readonly kind: 'file' | 'redis';
  /** Every row of the domain. */
  readAll(): Promise<SourceRead>;
  /** The rows that can apply to one principal: its exact rows and every `*` row. */
  readForPrincipal(id: string): Promise<SourceRead>;
  /** Every row naming one tool, whoever it is for. */
  readForTool(tool: string): Promise<SourceRead>;
  readRevision(): Promise<RevisionRead>;
}
