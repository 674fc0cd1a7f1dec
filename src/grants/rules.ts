/**
 * The grant rules of DESIGN §3, as pure functions over rows:
 * - an exact principal/tool row overrides the `*` rows for that tool, deny included;
 * - a `*` row applies only to principals holding every one of its scopes;
 * - among the rows that apply at the same level, deny wins;
 * - a tool with no applicable row is denied.
 * Holding more scopes can make more `*` rows apply, deny rows included, so no
 * scope (administrator or otherwise) ever lifts a deny.
 */
import { compileCondition } from '../config/policy/conditions.ts';
import { WILDCARD } from './types.ts';
import type { Decision, GrantRow, GrantSubject } from './types.ts';

/** Principal ids: 1–256 characters, no control characters. Shared with the policy schema. */
export const PRINCIPAL_PATTERN = '^[^\\u0000-\\u001f\\u007f]{1,256}$';
/** Tool names: 1–256 characters, no whitespace or control characters. */
export const TOOL_PATTERN = '^[^\\s\\u0000-\\u001f\\u007f]{1,256}$';
/** OAuth scope-token (RFC 6749 §3.3), at most 128 characters: safe inside a quoted challenge. */
export const SCOPE_PATTERN = '^[\\u0021\\u0023-\\u005b\\u005d-\\u007e]{1,128}$';
/** Most scopes one row may require. */
export const MAX_ROW_SCOPES = 64;
/** Row names: 1–128 characters, no control characters; they become metric label values. */
export const ROW_NAME_PATTERN = '^[^\\u0000-\\u001f\\u007f]{1,128}$';

const principalRe = new RegExp(PRINCIPAL_PATTERN, 'u');
const toolRe = new RegExp(TOOL_PATTERN, 'u');
const scopeRe = new RegExp(SCOPE_PATTERN, 'u');
const rowNameRe = new RegExp(ROW_NAME_PATTERN, 'u');
const ROW_KEYS = new Set(['principal', 'tool', 'scopes', 'effect', 'revision', 'when', 'enforcement', 'name']);

export function isPrincipalId(v: unknown): v is string {
  return typeof v === 'string' && principalRe.test(v);
}

export function isToolName(v: unknown): v is string {
  return typeof v === 'string' && v !== WILDCARD && toolRe.test(v);
}

export function isScope(v: unknown): v is string {
  return typeof v === 'string' && scopeRe.test(v);
}

export const NO_GRANT: Decision = Object.freeze({ effect: 'deny', reason: 'no_grant', rows: Object.freeze([]) });

/**
 * Checks one row read from anywhere (policy file, storage) and returns it in
 * canonical form (scopes sorted and unique, frozen), or undefined when any
 * field is malformed. Exact-principal rows must not carry scopes: a scope
 * condition on a named principal would let a missing scope skip a deny.
 */
export function normalizeRow(v: unknown): GrantRow | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const r = v as Record<string, unknown>;
  for (const k of Object.keys(r)) if (!ROW_KEYS.has(k)) return undefined;
  const { principal, tool, effect, revision, when, enforcement, name } = r;
  const rawScopes = r.scopes ?? [];
  if (!isPrincipalId(principal) || !isToolName(tool)) return undefined;
  if (effect !== 'allow' && effect !== 'deny') return undefined;
  if (revision !== undefined && !(Number.isSafeInteger(revision) && (revision as number) >= 0)) return undefined;
  if (!Array.isArray(rawScopes) || rawScopes.length > MAX_ROW_SCOPES || !rawScopes.every(isScope)) return undefined;
  const scopes = [...new Set(rawScopes as string[])].sort();
  if (principal !== WILDCARD && scopes.length > 0) return undefined;
  // A condition that does not compile makes the row malformed, wherever it was read from.
  if (when !== undefined && !(typeof when === 'string' && compileCondition(when).ok)) return undefined;
  if (enforcement !== undefined && enforcement !== 'enforce' && enforcement !== 'audit') return undefined;
  if (name !== undefined && !(typeof name === 'string' && rowNameRe.test(name))) return undefined;
  const row: GrantRow = {
    principal,
    tool,
    scopes: Object.freeze(scopes),
    effect,
    ...(revision !== undefined && { revision: revision as number }),
    ...(when !== undefined && { when: when as string }),
    ...(enforcement === 'audit' && { enforcement: 'audit' as const }),
    ...(name !== undefined && { name: name as string }),
  };
  return Object.freeze(row);
}

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
 * means some call could be allowed and is marked `pending`; a deny is final.
 */
export function decideRows(applicable: readonly GrantRow[]): Decision {
  const pending = applicable.some((r) => r.when !== undefined);
  if (!pending) return decideMatching(applicable, applicable);
  const best = decideMatching(applicable.filter((r) => r.when === undefined || r.effect === 'allow'), applicable);
  return best.effect === 'allow' ? Object.freeze({ ...best, pending: true }) : best;
}

/**
 * The grant rules over the rows whose conditions hold for one call.
 * `candidates` are all rows that apply by principal and scopes: a refusal
 * because none of them matched is shadowed when one of them is in audit mode
 * (a conditional allow being rolled out), a refusal by deny rows only when
 * every one of them is.
 */
export function decideMatching(matching: readonly GrantRow[], candidates: readonly GrantRow[]): Decision {
  if (matching.length === 0) {
    return candidates.some(isAudit) ? Object.freeze({ ...NO_GRANT, audit: true }) : NO_GRANT;
  }
  const exact = matching.filter((r) => r.principal !== WILDCARD);
  const level = exact.length > 0 ? exact : matching;
  const denies = level.filter((r) => r.effect === 'deny');
  const isExact = exact.length > 0;
  if (denies.length > 0) {
    const decision: Decision = { effect: 'deny', reason: isExact ? 'exact_deny' : 'wildcard_deny', rows: Object.freeze(denies) };
    return Object.freeze(denies.every(isAudit) ? { ...decision, audit: true } : decision);
  }
  return Object.freeze({ effect: 'allow', reason: isExact ? 'exact_allow' : 'wildcard_allow', rows: Object.freeze([...level]) });
}

function isAudit(row: GrantRow): boolean {
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
