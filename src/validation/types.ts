import type { ParamHeader } from './header-declarations.ts';

/**
 * Shared types of the argument validator. Results carry only closed codes,
 * JSON pointers and keyword names: never argument values, schema text or
 * engine messages, so they can be returned to callers and logged as they are.
 */

/** Why a tool's inputSchema cannot be enforced; a closed set. */
export type UnsupportedReason =
  /** Not a JSON Schema object or boolean, or invalid against its meta-schema. */
  | 'malformed_schema'
  /** A keyword that is neither an assertion, applicator nor a known annotation. */
  | 'unknown_keyword'
  /** A `$ref` that does not resolve inside the schema itself (never fetched). */
  | 'remote_ref'
  /** A pattern ECMAScript rejects or the linear-time engine cannot run. */
  | 'invalid_pattern'
  /** A pattern longer than the configured bound. */
  | 'pattern_too_long'
  /** A `$schema` other than 2020-12 or draft-07, or a custom vocabulary. */
  | 'unsupported_dialect'
  /** A combination of keywords the engine is known to mis-enforce. */
  | 'unsupported_shape'
  /** The schema is larger or deeper than the compiler accepts. */
  | 'schema_too_large';

export const UNSUPPORTED_REASONS: readonly UnsupportedReason[] = Object.freeze([
  'malformed_schema',
  'unknown_keyword',
  'remote_ref',
  'invalid_pattern',
  'pattern_too_long',
  'unsupported_dialect',
  'unsupported_shape',
  'schema_too_large',
]);

export interface ValidationError {
  /** JSON pointer (RFC 6901) to the failing location in the arguments. */
  readonly instancePath: string;
  /** The JSON Schema keyword that failed. */
  readonly keyword: string;
  /**
   * `required`: the names of the missing properties. They come from the
   * schema's `required` list, never from the arguments.
   */
  readonly missing?: readonly string[];
  /**
   * `additionalProperties`: how many properties the schema does not allow.
   * Their names are the caller's own content, so only the parent's pointer
   * and the count are reported.
   */
  readonly count?: number;
}

export type ValidationResult =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly code: 'invalid_arguments' | 'case_variant_key';
      readonly errors: readonly ValidationError[];
    }
  | { readonly ok: false; readonly code: 'bounds_exceeded' };

export type Validate = (args: unknown) => ValidationResult;

export type CompileResult =
  | {
      readonly ok: true;
      readonly validate: Validate;
      /**
       * Whether any keyword compares values (`minimum`, `maximum`, `multipleOf`,
       * `const`, `enum`, `uniqueItems`…), so that a number JSON.parse rounded
       * could be judged differently from the digits the server reads.
       */
      readonly comparesValues: boolean;
      /** The `Mcp-Param-*` headers the schema declares (`x-mcp-header`), in schema order. */
      readonly paramHeaders: readonly ParamHeader[];
    }
  | { readonly ok: false; readonly reason: UnsupportedReason };

/** One schema object, as the walker and the rewrites see it. */
export type SchemaObject = Record<string, unknown>;

export type Dialect = '2020-12' | 'draft-07';
