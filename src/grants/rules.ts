/**
 * The grant rules of DESIGN §3, as pure functions over rows:
 * - an exact principal/tool row overrides the `*` rows for that tool, deny included;
 * - a `*` row applies only to principals holding every one of its scopes;
 * - among the rows that apply at the same level, deny wins;
 * - a tool with no applicable row is denied.
 * Holding more scopes can make more `*` rows apply, deny rows included, so no
 * scope (administrator or otherwise) ever lifts a deny.
 */
import { WILDCARD } from '../config/policy/grant-row.ts';
import type { Decision, GrantSubject } from './types.ts';
import type { GrantRow } from '../config/policy/grant-row.ts';

export const NO_GRANT: Decision = Object.freeze({ effect: 'deny', reason: 'no_grant', rows: Object.freeze([]) });

export function holdsAll(held: ReadonlySet<string>, required: readonly string[]): boolean {
  for (const s of required) if (!held.has(s)) return false;
  return true;
}

export function toScopeSet(scopes: GrantSubject['scopes']): ReadonlySet<string> {
  return scopes instanceof Set ? scopes : new Set(scopes);
}

/** Whether a row takes part in decisions for this principal. */
export function applies(row: GrantRow, id: string, held: ReadonlySet<string>): boolean {
  if (row.principal === WILDCARD) return holdsAll(held, row.scopes);
  return row.principal === id;
}

/**
 * Decides one tool from the rows for that tool that already apply to the
 * principal (see `applies`).
 */
export function decideRows(applicable: readonly GrantRow[]): Decision {
  if (applicable.length === 0) return NO_GRANT;
  const exact = applicable.filter((r) => r.principal !== WILDCARD);
  const level = exact.length > 0 ? exact : applicable;
  const denies = level.filter((r) => r.effect === 'deny');
  const isExact = exact.length > 0;
  if (denies.length > 0) {
    return Object.freeze({ effect: 'deny', reason: isExact ? 'exact_deny' : 'wildcard_deny', rows: Object.freeze(denies) });
  }
  return Object.freeze({ effect: 'allow', reason: isExact ? 'exact_allow' : 'wildcard_allow', rows: Object.freeze([...level]) });
}

/**
 * The scopes that would turn a denial into an allow, for the 403
 * `insufficient_scope` challenge: the scopes of a `*` allow row the principal
 * lacks some of, provided that holding them would not also bring a `*` deny
 * into force. Undefined when scopes cannot help: the tool is already allowed,
 * an exact row names the principal (its deny is final), or a `*` deny already
 * applies. Among several candidate rows the one needing the fewest new scopes
 * wins, then the lexically first scope list, so the answer is stable.
 */
export function scopesThatWouldGrant(
  allRows: readonly GrantRow[],
  subject: GrantSubject,
  tool: string,
): string[] | undefined {
  const held = toScopeSet(subject.scopes);
  const forTool = allRows.filter((r) => r.tool === tool);
  if (forTool.some((r) => r.principal !== WILDCARD && r.principal === subject.id)) return undefined;
  const wildcard = forTool.filter((r) => r.principal === WILDCARD);
  if (wildcard.some((r) => holdsAll(held, r.scopes))) return undefined;

  let best: { missing: number; scopes: readonly string[]; key: string } | undefined;
  for (const row of wildcard) {
    if (row.effect !== 'allow') continue;
    const hypothetical = new Set([...held, ...row.scopes]);
    if (wildcard.some((r) => r.effect === 'deny' && holdsAll(hypothetical, r.scopes))) continue;
    const missing = row.scopes.filter((s) => !held.has(s)).length;
    const key = row.scopes.join(' ');
    if (best === undefined || missing < best.missing || (missing === best.missing && key < best.key)) {
      best = { missing, scopes: row.scopes, key };
    }
  }
  return best === undefined ? undefined : [...best.scopes];
}
