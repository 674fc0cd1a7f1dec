import { Ajv2020 } from 'ajv/dist/2020.js';
import { Ajv as AjvDraft7 } from 'ajv';
import type { Options } from 'ajv';
import { linearRegExpEngine } from './regex.ts';
import type { Dialect } from './types.ts';

/**
 * ajv instances. Options that matter for safety:
 * - ownProperties: `required: ["__proto__"]` must not be met by the prototype;
 * - useDefaults/coerceTypes/removeAdditional off: arguments are forwarded
 *   byte-identical, so validation must never change them;
 * - validateFormats off: `format` is an annotation (2020-12 says so by default);
 * - messages off: no prose is produced that could leak into a response;
 * - code.regExp: patterns run on RE2, linear in the input.
 * Strict-mode checks are ajv's own opinions about valid but redundant schemas
 * (`if` without `then`); the keyword walk already refuses unknown keywords
 * per dialect, so they are logged to nowhere rather than refusing good tools.
 */

const silent = { log() {}, warn() {}, error() {} };

const options: Options = {
  strictSchema: 'log',
  strictNumbers: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allowUnionTypes: true,
  allowMatchingProperties: true,
  logger: silent,
  ownProperties: true,
  useDefaults: false,
  coerceTypes: false,
  removeAdditional: false,
  validateFormats: false,
  allErrors: true,
  messages: false,
  verbose: false,
  unicodeRegExp: true,
  code: { regExp: linearRegExpEngine },
};

/** A fresh instance per tool: schemas with equal `$id`s must not collide. */
export function newCompiler(dialect: Dialect): Ajv2020 | AjvDraft7 {
  const opts = { ...options, validateSchema: false };
  return dialect === '2020-12' ? new Ajv2020(opts) : new AjvDraft7(opts);
}

/** Shared meta-schema checkers: they only validate, never store user schemas. */
let checkers: { readonly [D in Dialect]: Ajv2020 | AjvDraft7 } | undefined;

export function metaSchemaAccepts(dialect: Dialect, schema: unknown): boolean {
  checkers ??= { '2020-12': new Ajv2020(options), 'draft-07': new AjvDraft7(options) };
  try {
    return checkers[dialect].validateSchema(schema as object) === true;
  } catch {
    return false;
  }
}
