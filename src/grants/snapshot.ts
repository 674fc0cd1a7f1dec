/**
 * Grant snapshots: the rows applicable to one principal at one control
 * revision, with every tool's decision precomputed so the per-call check is a
 * single map lookup. Anything malformed or over the row bound fails closed as
 * `grants_unavailable`; callers never get a partial snapshot.
 */
import { createHash } from 'node:crypto';
import { Lru } from '../bounded/lru.ts';
import { NO_GRANT, applies, decideRows, toScopeSet } from './rules.ts';
import { approvalMember, isPrincipalId, isScope, normalizeRow } from '../config/policy/grant-row.ts';
import { MAX_SNAPSHOT_ROWS } from './types.ts';
import { WILDCARD } from '../config/policy/grant-row.ts';
import type { Decision, GrantSnapshot, GrantSubject, SnapshotResult, StoredSnapshot } from './types.ts';
import type { GrantRow } from '../config/policy/grant-row.ts';

/** Stored snapshot text larger than this is refused before parsing. */
const MAX_SNAPSHOT_TEXT_BYTES = 16 * 1024 * 1024;

const UNAVAILABLE: SnapshotResult = Object.freeze({ ok: false, code: 'grants_unavailable' });

/** What a snapshot holds besides whom and when it was computed for: a function of its rows alone. */
type Parts = Pick<GrantSnapshot, 'rows' | 'digest' | 'decisions' | 'conditional'>;

/** A row set that fails closed: more than MAX_SNAPSHOT_ROWS. */
const NO_PARTS: Parts = Object.freeze({
  rows: Object.freeze([]),
  digest: '',
  decisions: new Map(),
  conditional: new Map(),
});

/** Distinct applicable row sets remembered per rows in force; others rebuild their parts (the stores still cache each principal's snapshot). */
const PARTS_PER_ROWS = 1024;

interface RowsMemo {
  /** Each row in canonical form, undefined where malformed. */
  readonly clean: readonly (GrantRow | undefined)[];
  /** Parts by which rows applied (their indexes). */
  readonly parts: Lru<string, Parts>;
}

/**
 * Per frozen rows-in-force array (the file source's, one per revision): its
 * rows checked once, and the parts built from it by which rows applied.
 * Every principal the same rows apply to (all callers of a wildcard grant
 * with the same scopes) shares one set of rows, digest and decisions, so a
 * principal's first call builds only its own small record.
 */
const memos = new WeakMap<readonly GrantRow[], RowsMemo>();

function memoFor(rows: readonly GrantRow[]): RowsMemo | undefined {
  // Only a frozen array cannot change under a remembered key.
  if (!Object.isFrozen(rows)) return undefined;
  let memo = memos.get(rows);
  if (memo === undefined) {
    memo = { clean: rows.map((row) => normalizeRow(row)), parts: new Lru(PARTS_PER_ROWS) };
    memos.set(rows, memo);
  }
  return memo;
}

/** Computes the snapshot for one principal from all rows of a policy domain. */
export function snapshotFor(rows: readonly GrantRow[], subject: GrantSubject, revision: number): SnapshotResult {
  if (!isSubjectId(subject.id) || !isRevision(revision)) return UNAVAILABLE;
  const held = toScopeSet(subject.scopes);
  const memo = memoFor(rows);
  if (memo === undefined) {
    const picked: GrantRow[] = [];
    for (const row of rows) {
      if (!applies(row, subject.id, held)) continue;
      const clean = normalizeRow(row);
      if (clean === undefined) return UNAVAILABLE;
      picked.push(clean);
    }
    return build(subject.id, recordedScopes(held), revision, picked);
  }
  const indexes: number[] = [];
  for (let i = 0; i < rows.length; i++) {
    if (!applies(rows[i] as GrantRow, subject.id, held)) continue;
    if (memo.clean[i] === undefined) return UNAVAILABLE;
    indexes.push(i);
  }
  const key = indexes.join(',');
  let parts = memo.parts.get(key);
  if (parts === undefined) {
    parts = buildParts(indexes.map((i) => memo.clean[i] as GrantRow));
    memo.parts.set(key, parts);
  }
  return parts === NO_PARTS ? UNAVAILABLE : withParts(subject.id, recordedScopes(held), revision, parts);
}

/**
 * Checks a snapshot read back from storage: exact fields and types, the row
 * bound, and that every row really applies to the recorded principal and
 * scopes. A `digest`, when present, must match the rows.
 */
export function validateSnapshot(value: unknown): SnapshotResult {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return UNAVAILABLE;
  const v = value as Record<string, unknown>;
  for (const k of Object.keys(v)) {
    if (k !== 'principal' && k !== 'scopes' && k !== 'revision' && k !== 'rows' && k !== 'digest') return UNAVAILABLE;
  }
  const { principal, scopes, revision, rows, digest } = v;
  if (!isSubjectId(principal) || !isRevision(revision)) return UNAVAILABLE;
  if (!Array.isArray(scopes) || !scopes.every(isScope)) return UNAVAILABLE;
  if (!Array.isArray(rows) || rows.length > MAX_SNAPSHOT_ROWS) return UNAVAILABLE;
  if (digest !== undefined && typeof digest !== 'string') return UNAVAILABLE;
  const held = new Set(scopes);
  const clean: GrantRow[] = [];
  for (const raw of rows) {
    const row = normalizeRow(raw);
    if (row === undefined || !applies(row, principal, held)) return UNAVAILABLE;
    clean.push(row);
  }
  const result = build(principal, recordedScopes(held), revision, clean);
  if (result.ok && digest !== undefined && digest !== result.snapshot.digest) return UNAVAILABLE;
  return result;
}

/** Parses and validates stored snapshot text; invalid JSON fails closed. */
export function parseSnapshot(text: string): SnapshotResult {
  if (typeof text !== 'string' || text.length > MAX_SNAPSHOT_TEXT_BYTES) return UNAVAILABLE;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return UNAVAILABLE;
  }
  return validateSnapshot(value);
}

/** The storable form; `JSON.stringify` of it round-trips through `parseSnapshot`. */
export function toStored(snapshot: GrantSnapshot): StoredSnapshot & { readonly digest: string } {
  return {
    principal: snapshot.principal,
    scopes: snapshot.scopes,
    revision: snapshot.revision,
    rows: snapshot.rows,
    digest: snapshot.digest,
  };
}

const empties = new Lru<string, GrantSnapshot>(4096);

/**
 * A snapshot with no rows, for requests no tool row decides (resources,
 * prompts, completions): they never wait on the grant store. Kept for the
 * most recent few thousand principals.
 */
export function emptySnapshot(principal: string): GrantSnapshot {
  let s = empties.get(principal);
  if (s === undefined) {
    const built = build(principal, [], 0, []);
    if (!built.ok) throw new TypeError('an empty snapshot always builds');
    s = built.snapshot;
    empties.set(principal, s);
  }
  return s;
}

/** The decision for one tool: one map lookup. */
export function decide(snapshot: GrantSnapshot, tool: string): Decision {
  return snapshot.decisions.get(tool) ?? NO_GRANT;
}

/** The names, in input order, that the snapshot allows. */
export function grantedTools(snapshot: GrantSnapshot, toolNames: Iterable<string>): string[] {
  const out: string[] = [];
  for (const name of toolNames) if (decide(snapshot, name).effect === 'allow') out.push(name);
  return out;
}

/**
 * Whether a cached snapshot was computed for this principal id and scope set,
 * so a snapshot is never reused for a token carrying different scopes.
 */
export function snapshotMatches(snapshot: GrantSnapshot, subject: GrantSubject): boolean {
  if (snapshot.principal !== subject.id) return false;
  const scopes = recordedScopes(toScopeSet(subject.scopes));
  return scopes.length === snapshot.scopes.length && scopes.every((s, i) => s === snapshot.scopes[i]);
}

/**
 * SHA-256 hex over the canonical JSON (sorted keys, no whitespace) of the
 * distinct rows in canonical order: equal row sets give equal digests whatever
 * their order or repetition. Equals `snapshot.digest` for a snapshot's rows.
 */
export function rowsDigest(rows: readonly GrantRow[]): string {
  return hashKeys([...new Set(rows.map(canonicalRow))].sort());
}

function hashKeys(sortedKeys: readonly string[]): string {
  return createHash('sha256')
    .update(`[${sortedKeys.join(',')}]`)
    .digest('hex');
}

function build(principal: string, scopes: readonly string[], revision: number, rows: GrantRow[]): SnapshotResult {
  const parts = buildParts(rows);
  return parts === NO_PARTS ? UNAVAILABLE : withParts(principal, scopes, revision, parts);
}

function withParts(principal: string, scopes: readonly string[], revision: number, parts: Parts): SnapshotResult {
  const snapshot: GrantSnapshot = Object.freeze({ principal, scopes: Object.freeze(scopes), revision, ...parts });
  return Object.freeze({ ok: true, snapshot });
}

function buildParts(rows: GrantRow[]): Parts {
  const unique = new Map<string, GrantRow>();
  for (const row of rows) unique.set(canonicalRow(row), row);
  if (unique.size > MAX_SNAPSHOT_ROWS) return NO_PARTS;
  const keys = [...unique.keys()].sort();
  const ordered = Object.freeze(keys.map((k) => unique.get(k) as GrantRow));
  const digest = hashKeys(keys);

  const byTool = new Map<string, GrantRow[]>();
  for (const row of ordered) {
    const list = byTool.get(row.tool);
    if (list === undefined) byTool.set(row.tool, [row]);
    else list.push(row);
  }
  const decisions = new Map<string, Decision>();
  const conditional = new Map<string, readonly GrantRow[]>();
  for (const [tool, list] of byTool) {
    const d = decideRows(list);
    decisions.set(tool, d);
    if (d.pending === true) conditional.set(tool, Object.freeze(list));
  }

  return Object.freeze({ rows: ordered, digest, decisions, conditional });
}

function canonicalRow(row: GrantRow): string {
  // Keys in sorted order; JSON.stringify of strings and safe integers already
  // matches RFC 8785 output.
  return (
    `{${approvalMember(row)}"effect":${JSON.stringify(row.effect)}${optional('enforcement', row.enforcement)}${optional('name', row.name)},` +
    `"principal":${JSON.stringify(row.principal)}${optional('revision', row.revision)},` +
    `"scopes":${JSON.stringify(row.scopes)},"tool":${JSON.stringify(row.tool)}${optional('when', row.when)}}`
  );
}

/** An optional member of canonicalRow's JSON, with its leading comma; nothing when absent. */
function optional(key: string, v: string | number | undefined): string {
  return v === undefined ? '' : `,"${key}":${JSON.stringify(v)}`;
}

function recordedScopes(held: ReadonlySet<string>): string[] {
  // Scopes outside the scope-token grammar can never match a row, so they do
  // not change any decision and are not recorded.
  return [...held].filter(isScope).sort();
}

function isSubjectId(v: unknown): v is string {
  return isPrincipalId(v) && v !== WILDCARD;
}

function isRevision(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) >= 0;
}
