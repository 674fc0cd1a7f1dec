/**
 * The policy file as a grant source: rows from the loaded policy, in process,
 * with a revision that only moves when the caller swaps in new rows.
 */
import { normalizeRow } from '../../config/policy/grant-row.ts';
import { WILDCARD } from '../../config/policy/grant-row.ts';
import type { GrantRow } from '../../config/policy/grant-row.ts';
import type { GrantSource, SourceRead } from './types.ts';

export interface FileGrantSource extends GrantSource {
  readonly kind: 'file';
  /** The rows and revision in force, synchronously. */
  current(): { readonly rows: readonly GrantRow[]; readonly revision: number };
  /**
   * Puts new rows in force at the next revision and returns it. Rows that are
   * not canonical are refused as a whole (undefined) and the old ones stay.
   */
  replace(rows: readonly GrantRow[]): number | undefined;
}

const MAX_REVISION = Number.MAX_SAFE_INTEGER;

export function createFileSource(rows: readonly GrantRow[], revision: number): FileGrantSource | undefined {
  if (!Number.isSafeInteger(revision) || revision < 0 || revision >= MAX_REVISION) return undefined;
  const first = canonical(rows);
  if (first === undefined) return undefined;
  let state = Object.freeze({ rows: first, revision });
  const read = (filter: (r: GrantRow) => boolean): Promise<SourceRead> =>
    Promise.resolve({ ok: true, rows: state.rows.filter(filter), revision: state.revision });
  return {
    kind: 'file',
    current: () => state,
    replace(next) {
      const clean = canonical(next);
      if (clean === undefined || state.revision + 1 >= MAX_REVISION) return undefined;
      state = Object.freeze({ rows: clean, revision: state.revision + 1 });
      return state.revision;
    },
    readAll: () => read(() => true),
    readForPrincipal: (id) => read((r) => r.principal === id || r.principal === WILDCARD),
    readForTool: (tool) => read((r) => r.tool === tool),
    readRevision: () => Promise.resolve({ ok: true, revision: state.revision }),
  };
}

function canonical(rows: readonly GrantRow[]): readonly GrantRow[] | undefined {
  const out: GrantRow[] = [];
  for (const r of rows) {
    const clean = normalizeRow(r);
    if (clean === undefined) return undefined;
    out.push(clean);
  }
  return Object.freeze(out);
}
