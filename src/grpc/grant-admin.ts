/**
 * GrantAdmin: set, delete and list grant rows and read (or bump) the
 * revision, with the semantics of `toolgate grants`: the same Redis source
 * and scripts, so a change writes the row and a new control revision in one
 * step and every replica hears of it. With grants from the policy file the
 * rows can be listed but not changed (grants_read_only → FAILED_PRECONDITION).
 */
import type { ErrorId } from '../errors.ts';
import type { ChangeResult, RedisGrantSource } from '../grants/sources/redis.ts';
import type { GrantRow } from '../config/policy/grant-row.ts';
import type { GrpcPolicyDeps } from './deps.ts';
import type { GrantRow as WireRow, GrantRow__Output } from './generated/toolgate/v1/GrantRow.ts';

export type AdminResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ErrorId };

const READ_ONLY = { ok: false, error: 'grants_read_only' } as const;
const UNAVAILABLE = { ok: false, error: 'grants_unavailable' } as const;

export class GrantAdmin {
  readonly #deps: GrpcPolicyDeps;
  readonly #source: RedisGrantSource | undefined;

  /** With Redis grants, writes the domain's rows over the sidecar's shared connection (`deps.grantRows`). */
  constructor(deps: GrpcPolicyDeps) {
    this.#deps = deps;
    this.#source = deps.grantRows;
  }

  async set(row: GrantRow__Output | null): Promise<AdminResult<{ revision: number; changed: boolean }>> {
    if (this.#source === undefined) return READ_ONLY;
    return change(await this.#source.set(fromWire(row)));
  }

  async delete(row: GrantRow__Output | null): Promise<AdminResult<{ revision: number; changed: boolean }>> {
    if (this.#source === undefined) return READ_ONLY;
    return change(await this.#source.delete(fromWire(row)));
  }

  async list(principal: string, tool: string): Promise<AdminResult<{ rows: WireRow[]; revision: number }>> {
    let rows: readonly GrantRow[];
    let revision: number;
    if (this.#source === undefined) {
      const r = this.#deps.grants.revision();
      if (r === undefined) return UNAVAILABLE;
      rows = this.#deps.current().policy.grants;
      revision = r;
    } else {
      const read = tool === '' ? await this.#source.readAll() : await this.#source.readForTool(tool);
      if (!read.ok) return UNAVAILABLE;
      rows = read.rows;
      revision = read.revision;
    }
    const picked = rows.filter(
      (r) => (principal === '' || r.principal === principal) && (tool === '' || r.tool === tool),
    );
    return { ok: true, value: { rows: sortRows(picked).map(toWire), revision } };
  }

  async revision(bump: boolean): Promise<AdminResult<number>> {
    if (this.#source === undefined) {
      if (bump) return READ_ONLY;
      const r = this.#deps.grants.revision();
      return r === undefined ? UNAVAILABLE : { ok: true, value: r };
    }
    if (bump) {
      const r = await this.#source.bump();
      return r.ok ? { ok: true, value: r.revision } : UNAVAILABLE;
    }
    const r = await this.#source.readRevision();
    return r.ok ? { ok: true, value: r.revision } : UNAVAILABLE;
  }
}

function change(r: ChangeResult): AdminResult<{ revision: number; changed: boolean }> {
  if (!r.ok) return { ok: false, error: r.code === 'invalid_row' ? 'invalid_params' : 'grants_unavailable' };
  return { ok: true, value: { revision: r.revision, changed: r.changed } };
}

/** The wire row as the CLI would build it; `normalizeRow` in the source has the final word. */
function fromWire(row: GrantRow__Output | null): unknown {
  if (row === null) return undefined;
  const a = row.approval;
  // An approval on any other effect is left for normalizeRow to refuse, never silently dropped.
  const approval =
    a === null
      ? undefined
      : {
          approverScope: a.approverScope,
          ...(a.expiresInSeconds !== 0 && { expiresIn: a.expiresInSeconds }),
          ...(a.selfApproval && { selfApproval: true }),
        };
  return {
    principal: row.principal,
    tool: row.tool,
    effect: row.effect,
    scopes: row.scopes,
    ...(approval !== undefined && { approval }),
  };
}

function toWire(r: GrantRow): WireRow {
  const a = r.approval;
  return {
    principal: r.principal,
    tool: r.tool,
    scopes: [...r.scopes],
    effect: a === undefined ? r.effect : 'require_approval',
    revision: r.revision ?? 0,
    ...(a !== undefined && {
      approval: { approverScope: a.approverScope, expiresInSeconds: a.expiresIn, selfApproval: a.selfApproval },
    }),
  };
}

/** The CLI's order, so both list the same rows the same way. */
function sortRows(rows: readonly GrantRow[]): GrantRow[] {
  return [...rows].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
}

function sortKey(r: GrantRow): string {
  return `${r.principal}\u0000${r.tool}\u0000${r.effect}\u0000${r.scopes.join(' ')}`;
}
