/**
 * Shared plumbing for toolgate's YAML/JSON configuration files (the policy and
 * the static key file): parse YAML strictly, validate against a JSON Schema,
 * and report errors as JSON pointers plus the failing rule. Messages are built
 * here, never taken from the YAML parser, because its messages quote source
 * lines, and a key file's source lines are secrets.
 */
import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { parseDocument } from 'yaml';

export interface ConfigError {
  /** JSON pointer to the failing location ('' for the whole document). */
  readonly path: string;
  /** The rule that failed; never contains configured values. */
  readonly message: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; errors: ConfigError[] };

/** More errors than this are cut: the first ones are what an operator fixes first. */
const MAX_ERRORS = 50;

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });

export function compileSchema(schema: object): ValidateFunction {
  return ajv.compile(schema);
}

/**
 * YAML 1.2 core schema (so `yes`/`no` stay strings), duplicate keys rejected,
 * aliases bounded against expansion bombs. JSON is YAML, so JSON files load too.
 * With `exactIntegers`, an integer a double cannot hold is read as a `bigint`
 * with its digits (as json/exact.ts reads JSON); every other number as usual.
 */
export function parseYaml(
  text: string,
  maxBytes: number,
  options: { readonly exactIntegers?: boolean } = {},
): Parsed<unknown> {
  if (Buffer.byteLength(text, 'utf8') > maxBytes) {
    return { ok: false, errors: [{ path: '', message: `file is larger than ${maxBytes} bytes` }] };
  }
  const exact = options.exactIntegers === true;
  const doc = parseDocument(text, {
    uniqueKeys: true,
    strict: true,
    prettyErrors: true,
    version: '1.2',
    intAsBigInt: exact,
  });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      errors: doc.errors.slice(0, MAX_ERRORS).map((e) => {
        const at = e.linePos?.[0];
        const where = at === undefined ? '' : ` at line ${at.line}, column ${at.col}`;
        return { path: '', message: `YAML ${e.code.toLowerCase()}${where}` };
      }),
    };
  }
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: 100, ...(exact && { reviver: unlessInexact }) }) };
  } catch {
    return { ok: false, errors: [{ path: '', message: 'YAML aliases expand too far' }] };
  }
}

/** Back to a number wherever a double holds the integer exactly. */
function unlessInexact(_key: unknown, value: unknown): unknown {
  if (typeof value !== 'bigint') return value;
  const n = Number(value);
  return Number.isFinite(n) && BigInt(n) === value ? n : value;
}

export function validateWith<T>(validate: ValidateFunction, value: unknown): Parsed<T> {
  if (validate(value)) return { ok: true, value: value as T };
  return { ok: false, errors: formatAjvErrors(validate.errors ?? []) };
}

/** Turns ajv errors into pointer + rule pairs, naming the missing or unknown property in the path. */
function formatAjvErrors(errors: readonly ErrorObject[]): ConfigError[] {
  const seen = new Set<string>();
  const out: ConfigError[] = [];
  for (const e of errors) {
    let path = e.instancePath;
    const params = e.params as Record<string, unknown>;
    if (typeof e.propertyName === 'string') {
      path += `/${escapePointer(e.propertyName)}`;
    } else if (e.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
      path += `/${escapePointer(params.additionalProperty)}`;
    } else if (e.keyword === 'propertyNames' && typeof params.propertyName === 'string') {
      path += `/${escapePointer(params.propertyName)}`;
    } else if (e.keyword === 'required' && typeof params.missingProperty === 'string') {
      path += `/${escapePointer(params.missingProperty)}`;
    }
    const message = `${e.keyword}: ${describe(e)}`;
    const key = `${path}\n${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path, message });
    if (out.length === MAX_ERRORS) break;
  }
  return out;
}

function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

export function pointer(...segments: (string | number)[]): string {
  return segments.map((s) => `/${escapePointer(String(s))}`).join('');
}

function describe(e: ErrorObject): string {
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return 'unknown property';
    case 'required':
      return 'missing required property';
    case 'propertyNames':
      return 'invalid property name';
    case 'pattern':
      return 'contains characters, or has a length, that are not allowed here';
    case 'not':
      return 'this value is not allowed here';
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return e.message ?? 'invalid';
  }
}
