import { checkBounds } from './bounds.ts';
import { declaredNames, findCaseVariant, type DeclaredNames } from './case-variants.ts';
import { paramHeaders } from './header-declarations.ts';
import { staticiseDynamicRefs } from './dynamic-refs.ts';
import { metaSchemaAccepts, newCompiler } from './engine.ts';
import type { SchemaRegistry } from './registry.ts';
import { findUnsafeShape, SchemaIndex } from './unsafe-shapes.ts';
import type { CompileResult, ValidationError, ValidationResult } from './types.ts';
import { walkSchema, type SchemaNode } from './walk.ts';

/** Enough for an agent to fix its call; more would only grow the response. */
const MAX_REPORTED_ERRORS = 32;

interface AjvError {
  readonly instancePath: string;
  readonly keyword: string;
  readonly params?: { readonly missingProperty?: unknown } | undefined;
}

export interface CompileOptions {
  /** Registered schemas the tool's `$ref`s may name; without it, only refs inside the schema resolve. */
  readonly registry?: SchemaRegistry | undefined;
}

/**
 * Compiles a tool's inputSchema into a validator, or says why it cannot be
 * enforced. Total: never throws, whatever `schema` is. The schema is copied
 * first, so later changes to the caller's object cannot change enforcement.
 */
export function compileToolSchema(schema: unknown, options: CompileOptions = {}): CompileResult {
  let copy: unknown;
  try {
    const text = JSON.stringify(schema);
    if (text === undefined) return { ok: false, reason: 'malformed_schema' };
    copy = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: e instanceof RangeError ? 'schema_too_large' : 'malformed_schema' };
  }

  // Read before the walk, which rewrites some shapes of the copy in place.
  const mirrored = paramHeaders(copy);
  const walked = walkSchema(copy);
  if (!walked.ok) return walked;
  const { registry } = options;
  const registered = registry?.forDialect(walked.dialect);
  // Registered schemas are checked again with the tool's: their refs may
  // reach the tool's own resources, and the tool's reach into them.
  const nodes = registered === undefined ? walked.nodes : [...walked.nodes, ...registered.nodes];
  const index = new SchemaIndex(nodes, registered?.aliases);
  staticiseDynamicRefs(walked.nodes, index, true);
  if (findUnsafeShape(nodes, walked.dialect, index)) return { ok: false, reason: 'unsupported_shape' };
  if (!metaSchemaAccepts(walked.dialect, copy)) return { ok: false, reason: 'malformed_schema' };

  let check: ((data: unknown) => boolean) & { errors?: readonly AjvError[] | null | undefined };
  try {
    const compiler = newCompiler(walked.dialect);
    for (const { uri, schema: shared } of registered?.entries ?? []) compiler.addSchema(shared as object, uri);
    check = compiler.compile(copy as object);
  } catch (e) {
    if (typeof e !== 'object' || e === null || !('missingRef' in e)) return { ok: false, reason: 'malformed_schema' };
    const missing = 'missingSchema' in e && typeof e.missingSchema === 'string' ? e.missingSchema : '';
    return {
      ok: false,
      reason: registry?.onlyInOtherDialect(missing, walked.dialect) === true ? 'unsupported_dialect' : 'remote_ref',
    };
  }
  const names = declaredNames(nodes);
  return {
    ok: true,
    validate: (args) => run(check, names, args),
    comparesValues: nodes.some(comparesValues),
    paramHeaders: mirrored,
  };
}

const VALUE_KEYWORDS: readonly string[] = [
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'const',
  'enum',
  'uniqueItems',
];

function comparesValues(node: SchemaNode): boolean {
  return VALUE_KEYWORDS.some((k) => Object.hasOwn(node.schema, k));
}

function run(
  check: ((data: unknown) => boolean) & { errors?: readonly AjvError[] | null | undefined },
  names: DeclaredNames | undefined,
  args: unknown,
): ValidationResult {
  const bounds = checkBounds(args);
  if (!bounds.ok) {
    if (bounds.code === 'bounds_exceeded') return bounds;
    return { ok: false, code: 'invalid_arguments', errors: [{ instancePath: bounds.instancePath, keyword: 'type' }] };
  }
  const variant = names === undefined ? undefined : findCaseVariant(args, names);
  if (variant !== undefined)
    return { ok: false, code: 'case_variant_key', errors: [{ instancePath: variant, keyword: 'properties' }] };
  let valid: boolean;
  try {
    valid = check(args);
  } catch {
    // Only a schema that recurses without consuming input can get here
    // (bounded arguments cannot exhaust the stack otherwise): fail closed.
    return { ok: false, code: 'bounds_exceeded' };
  }
  if (valid) return { ok: true };
  return { ok: false, code: 'invalid_arguments', errors: summarise(check.errors ?? []) };
}

/**
 * One entry per keyword and location. `required` entries gather the missing
 * names the schema lists; `additionalProperties` entries count the
 * unexpected members without naming them (the names are the caller's).
 */
function summarise(found: readonly AjvError[]): ValidationError[] {
  const byKey = new Map<string, { instancePath: string; keyword: string; missing?: string[]; count?: number }>();
  for (const { instancePath, keyword, params } of found) {
    const key = `${keyword}\u0000${instancePath}`;
    let entry = byKey.get(key);
    if (entry === undefined) {
      if (byKey.size === MAX_REPORTED_ERRORS) continue;
      entry = { instancePath, keyword };
      byKey.set(key, entry);
    }
    if (keyword === 'required' && typeof params?.missingProperty === 'string') {
      const missing = (entry.missing ??= []);
      if (!missing.includes(params.missingProperty)) missing.push(params.missingProperty);
    } else if (keyword === 'additionalProperties') {
      entry.count = (entry.count ?? 0) + 1;
    }
  }
  return [...byKey.values()];
}
