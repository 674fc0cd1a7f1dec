/**
 * The grant decision model shared by snapshot storage and the grants
 * interceptor. Rows (config/policy/grant-row.ts) are plain data so they can be
 * written to and read back from storage; everything that is derived (maps for
 * `decide`) lives on the snapshot only.
 */
import type { GrantEffect, GrantRow } from '../config/policy/grant-row.ts';

/** The most rows one principal's snapshot may hold; more fails closed. */
export const MAX_SNAPSHOT_ROWS = 4096;

export type DecisionReason = 'exact_allow' | 'exact_deny' | 'wildcard_allow' | 'wildcard_deny' | 'no_grant';

export interface Decision {
  readonly effect: GrantEffect;
  readonly reason: DecisionReason;
  /** The rows that decided, for audit and cursor binding; empty for `no_grant`. */
  readonly rows: readonly GrantRow[];
  /**
   * Some row for the tool has a condition: this is the best case over every
   * possible call (what tools/list shows), and a call is decided again once
   * its arguments are known.
   */
  readonly pending?: true;
  /** A refusal by this decision is shadowed: the deciding rows (or, for no_grant, some candidate row) are in audit mode. */
  readonly audit?: true;
  /** Audit-mode deny rows that held beside the enforced deny rows that decided: recorded as would-be refusals. */
  readonly wouldDeny?: readonly GrantRow[];
}

/** Who a snapshot was computed for: wildcard rows depend on the scopes held. */
export interface GrantSubject {
  readonly id: string;
  readonly scopes: ReadonlySet<string> | readonly string[];
}

export interface GrantSnapshot {
  readonly principal: string;
  /** The scopes the snapshot was computed for, sorted. */
  readonly scopes: readonly string[];
  /** The control revision the rows were read at. */
  readonly revision: number;
  /** The applicable rows in canonical order. */
  readonly rows: readonly GrantRow[];
  /** SHA-256 hex over the canonical JSON of `rows`. */
  readonly digest: string;
  /** Per-tool decisions, precomputed so `decide` is one map lookup. */
  readonly decisions: ReadonlyMap<string, Decision>;
  /** For tools with a conditional row: every applicable row for the tool, decided per call. */
  readonly conditional: ReadonlyMap<string, readonly GrantRow[]>;
}

/** The storable form of a snapshot (what `validateSnapshot` reads back). */
export interface StoredSnapshot {
  readonly principal: string;
  readonly scopes: readonly string[];
  readonly revision: number;
  readonly rows: readonly GrantRow[];
}

export type SnapshotResult = { ok: true; snapshot: GrantSnapshot } | { ok: false; code: 'grants_unavailable' };
