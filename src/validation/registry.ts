import { dialectOf } from './dialect.ts';
import { staticiseDynamicRefs } from './dynamic-refs.ts';
import { metaSchemaAccepts } from './engine.ts';
import type { Dialect, UnsupportedReason } from './types.ts';
import { SchemaIndex, findUnsafeShape } from './unsafe-shapes.ts';
import { isRecord } from '../json/record.ts';
import { walkSchema, type SchemaNode } from './walk.ts';

/**
 * Shared schemas an operator registers by URI (from a ConfigMap, say), so a
 * tool's inputSchema may `$ref` them. Nothing is ever fetched: a `$ref` that
 * is neither inside the tool's schema nor registered stays `remote_ref`.
 *
 * Each registered schema passes the same checks as a tool's schema, once,
 * when the registry is built. A registered schema with a `$schema` keeps that
 * dialect and is usable only by tools of the same dialect (one validator never
 * mixes dialects). Without `$schema` it takes the dialect of the tool that
 * references it, as an embedded resource does, so it is checked under both
 * and usable under each one it passes.
 */

/** Every tool compile loads the whole registry into its compiler: keep it small. */
export const MAX_REGISTERED_SCHEMAS = 256;

const DIALECTS: readonly Dialect[] = ['2020-12', 'draft-07'];

/** Tool schemas without `$id` get bases under this scheme; a registered URI there would alias them. */
const PRIVATE_URI_PREFIX = 'urn:toolgate:';

export type RegistryErrorReason =
  | UnsupportedReason
  /** Not an absolute URI in canonical form (as WHATWG URL prints it), or with a fragment. */
  | 'invalid_uri'
  /** Two registered schemas (or their embedded resources) claim the same URI. */
  | 'duplicate_uri'
  /** More than MAX_REGISTERED_SCHEMAS entries. */
  | 'too_many_schemas';

interface RegistryError {
  /** The registration URI as the operator wrote it; never schema text. */
  readonly uri: string;
  readonly reason: RegistryErrorReason;
}

export type RegistryResult =
  | { readonly ok: true; readonly registry: SchemaRegistry }
  | { readonly ok: false; readonly errors: readonly RegistryError[] };

/** What a tool compile of one dialect loads: compiler input and detector input. */
export interface RegisteredSet {
  readonly entries: readonly { readonly uri: string; readonly schema: unknown }[];
  readonly nodes: readonly SchemaNode[];
  /** Registration URI → root pointer, for schemas whose `$id` differs. */
  readonly aliases: ReadonlyMap<string, string>;
}

interface Prepared {
  readonly uri: string;
  readonly schema: unknown;
  readonly nodes: readonly SchemaNode[];
  /** Every resource URI the schema defines: its registration URI, root `$id`, embedded `$id`s. */
  readonly resources: readonly string[];
}

const building = Symbol('building');

export class SchemaRegistry {
  /** Registration URIs, in the order given. */
  readonly uris: readonly string[];
  readonly #sets: Readonly<Record<Dialect, RegisteredSet>>;
  readonly #resources: Readonly<Record<Dialect, ReadonlySet<string>>>;

  /** Use createSchemaRegistry: only it validates the schemas. */
  constructor(
    token: typeof building,
    uris: readonly string[],
    prepared: Readonly<Record<Dialect, readonly Prepared[]>>,
  ) {
    if (token !== building) throw new TypeError('use createSchemaRegistry');
    this.uris = Object.freeze([...uris]);
    const sets = {} as Record<Dialect, RegisteredSet>;
    const resources = {} as Record<Dialect, ReadonlySet<string>>;
    for (const d of DIALECTS) {
      for (const p of prepared[d]) deepFreeze(p.schema);
      sets[d] = toSet(prepared[d]);
      resources[d] = new Set(prepared[d].flatMap((p) => p.resources));
    }
    this.#sets = Object.freeze(sets);
    this.#resources = Object.freeze(resources);
    Object.freeze(this);
  }

  get size(): number {
    return this.uris.length;
  }

  /** The registered schemas a tool of `dialect` may reference. */
  forDialect(dialect: Dialect): RegisteredSet {
    return this.#sets[dialect];
  }

  /** Whether `uri` names a registered resource usable only by tools of another dialect. */
  onlyInOtherDialect(uri: string, dialect: Dialect): boolean {
    return !this.#resources[dialect].has(uri) && DIALECTS.some((d) => this.#resources[d].has(uri));
  }
}

function toSet(prepared: readonly Prepared[]): RegisteredSet {
  const aliases = new Map<string, string>();
  for (const p of prepared) {
    const root = p.nodes[0];
    if (root !== undefined && root.base !== p.uri) aliases.set(p.uri, root.pointer);
  }
  return Object.freeze({
    entries: Object.freeze(prepared.map((p) => Object.freeze({ uri: p.uri, schema: p.schema }))),
    nodes: Object.freeze(prepared.flatMap((p) => p.nodes)),
    aliases,
  });
}

/**
 * Builds a registry from URI → schema. Every entry is checked and every
 * failing one reported, so an operator can fix a ConfigMap in one go. Never
 * throws; the input is copied, later changes to it have no effect.
 */
export function createSchemaRegistry(
  schemas: Readonly<Record<string, unknown>> | ReadonlyMap<string, unknown>,
): RegistryResult {
  const given =
    schemas instanceof Map ? [...schemas.entries()] : isRecord(schemas) ? Object.entries(schemas) : undefined;
  if (given === undefined) return { ok: false, errors: [{ uri: '', reason: 'malformed_schema' }] };
  if (given.length > MAX_REGISTERED_SCHEMAS) return { ok: false, errors: [{ uri: '', reason: 'too_many_schemas' }] };

  const errors: RegistryError[] = [];
  const candidates: Candidate[] = [];
  for (const [key, schema] of given) {
    const uri = canonicalUri(key);
    if (uri === undefined || !hasValidRootId(schema)) errors.push({ uri: key, reason: 'invalid_uri' });
    else candidates.push({ uri, given: key, ...prepare(uri, schema) });
  }

  const kept = {} as Record<Dialect, Prepared[]>;
  for (const d of DIALECTS) kept[d] = checkDialect(candidates, d);
  for (const c of candidates) {
    if (DIALECTS.some((d) => c.byDialect[d] !== undefined)) continue;
    errors.push({ uri: c.given, reason: c.reasons['2020-12'] ?? c.reasons['draft-07'] ?? 'malformed_schema' });
  }
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    registry: new SchemaRegistry(
      building,
      candidates.map((c) => c.uri),
      kept,
    ),
  };
}

interface Candidate {
  readonly uri: string;
  readonly given: string;
  readonly byDialect: Partial<Record<Dialect, Prepared>>;
  /** Why the schema is unusable under a dialect it was tried in. */
  readonly reasons: Partial<Record<Dialect, RegistryErrorReason>>;
}

/**
 * The schemas usable under `dialect`. Shapes depend on what refs reach, so
 * the set is checked as a whole, dropping failures until what is left is
 * clean on its own; a clash of URIs drops the later schema.
 */
function checkDialect(candidates: readonly Candidate[], dialect: Dialect): Prepared[] {
  const drop = (c: Candidate, reason: RegistryErrorReason) => {
    delete c.byDialect[dialect];
    c.reasons[dialect] = reason;
  };
  const claimed = new Set<string>();
  let set: Candidate[] = [];
  for (const c of candidates) {
    const p = c.byDialect[dialect];
    if (p === undefined) continue;
    if (p.resources.some((r) => claimed.has(r))) {
      drop(c, 'duplicate_uri');
      continue;
    }
    for (const r of p.resources) claimed.add(r);
    set.push(c);
  }
  let first = true;
  for (;;) {
    const prepared = set.map((c) => c.byDialect[dialect]!);
    const registered = toSet(prepared);
    const index = new SchemaIndex(registered.nodes, registered.aliases);
    if (first) staticiseDynamicRefs(registered.nodes, index, false);
    first = false;
    const unsafe = set.filter((c) => findUnsafeShape(c.byDialect[dialect]!.nodes, dialect, index));
    if (unsafe.length === 0) return prepared;
    for (const c of unsafe) drop(c, 'unsupported_shape');
    set = set.filter((c) => !unsafe.includes(c));
  }
}

/**
 * The registration URI, or undefined unless absolute, canonical and without
 * a fragment (a trailing empty `#` is allowed, as in `$id`s). Canonical so
 * that ajv's lookup and the shape detector's agree on which entry a `$ref`
 * names: a URI they might spell differently is refused, not guessed.
 */
function canonicalUri(key: string): string | undefined {
  const bare = key.endsWith('#') ? key.slice(0, -1) : key;
  let url: URL;
  try {
    url = new URL(bare);
  } catch {
    return undefined;
  }
  if (url.href !== bare || url.hash !== '' || bare.startsWith(PRIVATE_URI_PREFIX)) return undefined;
  return bare;
}

/** ajv takes a root `$id` as the base as it stands, unresolved: it must be absolute too. */
function hasValidRootId(schema: unknown): boolean {
  if (!isRecord(schema) || !Object.hasOwn(schema, '$id')) return true;
  const id = schema.$id;
  return typeof id === 'string' && canonicalUri(id) !== undefined;
}

function prepare(uri: string, schema: unknown): Pick<Candidate, 'byDialect' | 'reasons'> {
  let dialects = DIALECTS;
  if (isRecord(schema) && Object.hasOwn(schema, '$schema')) {
    const declared = dialectOf(schema.$schema);
    if (declared === undefined) return { byDialect: {}, reasons: { '2020-12': 'unsupported_dialect' } };
    dialects = [declared];
  }
  const byDialect: Partial<Record<Dialect, Prepared>> = {};
  const reasons: Partial<Record<Dialect, RegistryErrorReason>> = {};
  for (const dialect of dialects) {
    const result = prepareFor(uri, schema, dialect);
    if ('reason' in result) reasons[dialect] = result.reason;
    else byDialect[dialect] = result;
  }
  return { byDialect, reasons };
}

function prepareFor(uri: string, schema: unknown, dialect: Dialect): Prepared | { reason: RegistryErrorReason } {
  let copy: unknown;
  try {
    const text = JSON.stringify(schema);
    if (text === undefined) return { reason: 'malformed_schema' };
    copy = JSON.parse(text);
  } catch (e) {
    return { reason: e instanceof RangeError ? 'schema_too_large' : 'malformed_schema' };
  }
  const walked = walkSchema(copy, { dialect, base: uri, document: `${uri}#` });
  if (!walked.ok) return { reason: walked.reason };
  if (!metaSchemaAccepts(dialect, copy)) return { reason: 'malformed_schema' };
  const resources = new Set<string>([uri]);
  for (const n of walked.nodes) if (n.resource === n.pointer) resources.add(n.base);
  // Frozen once the whole set is known: `$dynamicRef`s are rewritten first.
  return { uri, schema: copy, nodes: Object.freeze(walked.nodes), resources: Object.freeze([...resources]) };
}

function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null || Object.isFrozen(v)) continue;
    Object.freeze(v);
    stack.push(...Object.values(v));
  }
  return value;
}
