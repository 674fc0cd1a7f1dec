/**
 * The shape and grammar of a grant row, as a policy file, storage and tokens
 * write them: principal ids, tool names, scopes. It sits with the policy
 * model, below everything that reads rows (auth, grants, the policy schema),
 * because a row is policy data before it is a grant decision.
 */
import { compileCondition } from './conditions.ts';

export type GrantEffect = 'allow' | 'deny';

/**
 * What a `require_approval` row asks before its call runs: a person holding
 * `approverScope` approves this exact call (principal, tool, argument digest,
 * policy revision) within `expiresIn` seconds; the caller may approve their
 * own call only when `selfApproval` is true.
 */
export interface ApprovalRule {
  readonly approverScope: string;
  /** Seconds from the request until the approval (or its use) lapses. */
  readonly expiresIn: number;
  readonly selfApproval: boolean;
}

/** The default life of an approval: 15 minutes. */
const DEFAULT_APPROVAL_SECONDS = 900;
/** Bounds of `expiresIn`: long enough to reach a person, short enough that a stale approval cannot linger. */
/**
 * A row's approval rule as the leading member of its canonical JSON
 * (`approval` sorts before `effect`), with its trailing comma; empty for a row
 * without one. Where rows are stored or digested, it keeps a require_approval
 * row from reading as the plain allow row beside it.
 */
export function approvalMember(row: { readonly approval?: ApprovalRule | undefined }): string {
  const a = row.approval;
  return a === undefined
    ? ''
    : `"approval":{"approverScope":${JSON.stringify(a.approverScope)},"expiresIn":${a.expiresIn},"selfApproval":${a.selfApproval}},`;
}

export const MIN_APPROVAL_SECONDS = 10;
export const MAX_APPROVAL_SECONDS = 86_400;
/** `expiresIn` as written: seconds, or a number with s, m or h. */
export const DURATION_PATTERN = '^[0-9]{1,6}[smh]?$';
const durationRe = new RegExp(DURATION_PATTERN, 'u');

/** The principal value that matches every principal holding the row's scopes. */
export const WILDCARD = '*';

/**
 * The groups Kubernetes puts every ServiceAccount in, `system:serviceaccounts`
 * and `system:serviceaccounts:<namespace>`: as scopes they are given only by the
 * `kubernetes` verifier, so a `*` row naming one means those ServiceAccounts.
 */
export const SERVICE_ACCOUNTS_SCOPE = 'system:serviceaccounts';
export const isServiceAccountScope = (scope: string): boolean =>
  scope === SERVICE_ACCOUNTS_SCOPE || scope.startsWith(`${SERVICE_ACCOUNTS_SCOPE}:`);

export interface GrantRow {
  /** An exact principal id, or `*`. */
  readonly principal: string;
  /** An exact tool name; never a pattern. */
  readonly tool: string;
  /**
   * Scopes a principal must hold, all of them, for a `*` row to apply. Always
   * empty on exact-principal rows: naming the principal is the whole condition.
   * Sorted and free of duplicates.
   */
  readonly scopes: readonly string[];
  readonly effect: GrantEffect;
  /** The control revision the row was written at, when the source tracks one. */
  readonly revision?: number;
  /**
   * A CEL condition (see conditions.ts): the row applies only when it
   * evaluates to true for the call. Absent: the row always applies.
   */
  readonly when?: string;
  /** `audit`: a refusal this row decides is recorded and the call forwarded (shadow mode). */
  readonly enforcement?: Enforcement;
  /** The row's name in decisions and metrics; policy rows without one are named by their JSON pointer. */
  readonly name?: string;
  /**
   * Present on rows written `effect: require_approval`: an allow row whose
   * call runs only once a person approved it. Among the allow rows that
   * apply, one asking for approval wins over one that does not.
   */
  readonly approval?: ApprovalRule;
}

export type Enforcement = 'enforce' | 'audit';

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
const ROW_KEYS = new Set([
  'principal',
  'tool',
  'scopes',
  'effect',
  'revision',
  'when',
  'enforcement',
  'name',
  'approval',
]);
const APPROVAL_KEYS = new Set(['approverScope', 'expiresIn', 'selfApproval']);

export function isPrincipalId(v: unknown): v is string {
  return typeof v === 'string' && principalRe.test(v);
}

function isToolName(v: unknown): v is string {
  return typeof v === 'string' && v !== WILDCARD && toolRe.test(v);
}

export function isScope(v: unknown): v is string {
  return typeof v === 'string' && scopeRe.test(v);
}

/** `expiresIn` in seconds: a whole number, or a number followed by s, m or h; undefined when malformed or out of bounds. */
export function durationSeconds(v: unknown): number | undefined {
  const text = typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : v;
  if (typeof text !== 'string' || !durationRe.test(text)) return undefined;
  const unit = text.at(-1) as string;
  const factor = unit === 'h' ? 3600 : unit === 'm' ? 60 : 1;
  const seconds = Number.parseInt(text, 10) * factor;
  return seconds >= MIN_APPROVAL_SECONDS && seconds <= MAX_APPROVAL_SECONDS ? seconds : undefined;
}

/** An `approval` object in canonical form (expiresIn in seconds, defaults applied), or undefined when malformed. */
function normalizeApproval(v: unknown): ApprovalRule | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const r = v as Record<string, unknown>;
  for (const k of Object.keys(r)) if (!APPROVAL_KEYS.has(k)) return undefined;
  if (!isScope(r.approverScope)) return undefined;
  const expiresIn = r.expiresIn === undefined ? DEFAULT_APPROVAL_SECONDS : durationSeconds(r.expiresIn);
  if (expiresIn === undefined) return undefined;
  if (r.selfApproval !== undefined && typeof r.selfApproval !== 'boolean') return undefined;
  return Object.freeze({ approverScope: r.approverScope, expiresIn, selfApproval: r.selfApproval === true });
}

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
  const { principal, tool, revision, when, enforcement, name } = r;
  // `require_approval` is an allow row that holds its call for a person's
  // approval: canonical rows (as storage keeps them) say `allow` and carry
  // `approval`, so both spellings read back as the same row.
  const asked = r.effect === 'require_approval';
  const effect = asked ? 'allow' : r.effect;
  const approval = r.approval === undefined ? undefined : normalizeApproval(r.approval);
  if (
    (asked && r.approval === undefined) ||
    (r.approval !== undefined && (approval === undefined || effect !== 'allow'))
  )
    return undefined;
  const rawScopes = r.scopes ?? [];
  if (!isPrincipalId(principal) || !isToolName(tool)) return undefined;
  if (effect !== 'allow' && effect !== 'deny') return undefined;
  if (revision !== undefined && !(Number.isSafeInteger(revision) && (revision as number) >= 0)) return undefined;
  if (!Array.isArray(rawScopes) || rawScopes.length > MAX_ROW_SCOPES || !rawScopes.every(isScope)) return undefined;
  const scopes = [...new Set(rawScopes)].sort();
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
    ...(when !== undefined && { when }),
    ...(enforcement === 'audit' && { enforcement: 'audit' as const }),
    ...(name !== undefined && { name }),
    ...(approval !== undefined && { approval }),
  };
  return Object.freeze(row);
}
