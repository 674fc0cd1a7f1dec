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
 * principal (see `applies`). Conditional rows are taken at their best case
 * (an allow row's condition holds, a deny row's does not), so an allow here
 * means some call could be allowed and is marked `pending`, as is a deny that
 * shadow mode only records; any other deny is final.
 */
export function decideRows(applicable: readonly GrantRow[]): Decision {
  const pending = applicable.some((r) => r.when !== undefined);
  if (!pending) return decideMatching(applicable, applicable);
  const best = decideMatching(
    applicable.filter((r) => r.when === undefined || r.effect === 'allow'),
    applicable,
  );
  // A refusal shadow mode only records lets calls through, so a conditional
  // enforced deny could still refuse one: that is decided per call too.
  return best.effect === 'allow' || best.audit === true ? Object.freeze({ ...best, pending: true }) : best;
}

/**
 * The grant rules over the rows whose conditions hold for one call.
 * `candidates` are all rows that apply by principal and scopes: a refusal
 * because none of them matched is shadowed when one of them is in audit mode
 * (a conditional allow being rolled out), a refusal by deny rows only when
 * every one of them is, and then only if it does not loosen enforcement
 * (see `unlessLoosening`).
 */
export function decideMatching(matching: readonly GrantRow[], candidates: readonly GrantRow[]): Decision {
  return unlessLoosening(rulesOver(matching, candidates), () =>
    rulesOver(matching.filter(enforcedOrAllow), candidates.filter(enforcedOrAllow)),
  );
}

/**
 * A row in audit mode never loosens what is enforced. A refusal decided
 * only by audit-mode deny rows (an exact one overriding `*` rows, say) is
 * decided again without them: when that still refuses, and is not itself
 * shadowed, that refusal is enforced and the audit rows are recorded as
 * would-be refusals beside it. `without` is that second decision.
 */
export function unlessLoosening(d: Decision, without: () => Decision): Decision {
  if (d.effect !== 'deny' || d.audit !== true || d.reason === 'no_grant') return d;
  const fallback = without();
  if (fallback.effect !== 'deny' || fallback.audit === true) return d;
  return Object.freeze({ ...fallback, wouldDeny: Object.freeze([...d.rows, ...(fallback.wouldDeny ?? [])]) });
}

/** Rows that stay when the audit-mode deny rows are left out. */
export function enforcedOrAllow(row: GrantRow): boolean {
  return row.effect !== 'deny' || !isAudit(row);
}

function rulesOver(matching: readonly GrantRow[], candidates: readonly GrantRow[]): Decision {
  if (matching.length === 0) {
    return candidates.some(isAudit) ? Object.freeze({ ...NO_GRANT, audit: true }) : NO_GRANT;
  }
  const exact = matching.filter((r) => r.principal !== WILDCARD);
  const level = exact.length > 0 ? exact : matching;
  const denies = level.filter((r) => r.effect === 'deny');
  const isExact = exact.length > 0;
  if (denies.length > 0) return denyBy(isExact ? 'exact_deny' : 'wildcard_deny', denies);
  // A row asking for approval names the allow: it is the one that governs the call.
  const asking = level.filter((r) => r.approval !== undefined);
  return Object.freeze({
    effect: 'allow',
    reason: isExact ? 'exact_allow' : 'wildcard_allow',
    rows: Object.freeze([...asking, ...level.filter((r) => r.approval === undefined)]),
  });
}

/**
 * A refusal by the deny rows that hold at the deciding level. Enforced rows
 * decide whenever one holds; audit-mode rows beside them are kept as
 * `wouldDeny`, so shadow mode still records them. Only when every one is in
 * audit mode is the refusal shadowed.
 */
export function denyBy(reason: 'exact_deny' | 'wildcard_deny', denies: readonly GrantRow[]): Decision {
  const enforced = denies.filter((r) => !isAudit(r));
  if (enforced.length === 0)
    return Object.freeze({ effect: 'deny', reason, rows: Object.freeze([...denies]), audit: true });
  const shadowed = denies.filter(isAudit);
  return Object.freeze({
    effect: 'deny',
    reason,
    rows: Object.freeze(enforced),
    ...(shadowed.length > 0 && { wouldDeny: Object.freeze(shadowed) }),
  });
}

export function isAudit(row: GrantRow): boolean {
  return row.enforcement === 'audit';
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
