import { isRecord } from '../json/record.ts';
import type { SchemaObject } from './types.ts';

/**
 * Rewrites, in toolgate's private copy, two shapes ajv cannot take as they
 * stand into equivalents it enforces correctly:
 * - `enum: []` (nothing is valid; ajv refuses to compile it) becomes an
 *   `allOf` entry `{not: {}}`, which fails for every instance with keyword `not`;
 * - `properties.__proto__` (ajv drops that entry, and then counts such a
 *   property as additional) moves to `patternProperties` as `^__proto__$`,
 *   which matches exactly that name and is evaluated the same way by
 *   `additionalProperties` and `unevaluatedProperties`.
 * A shape that does not fit (a non-array `allOf`, an existing `^__proto__$`
 * pattern) is left alone, to be refused as before.
 */
export function rewriteEquivalents(schema: SchemaObject): void {
  const { allOf } = schema;
  if (Array.isArray(schema.enum) && schema.enum.length === 0 && (allOf === undefined || Array.isArray(allOf))) {
    delete schema.enum;
    schema.allOf = [...(allOf ?? []), { not: {} }];
  }
  const { properties, patternProperties } = schema;
  if (!isRecord(properties) || !Object.hasOwn(properties, '__proto__')) return;
  if (
    patternProperties !== undefined &&
    (!isRecord(patternProperties) || Object.hasOwn(patternProperties, PROTO_PATTERN))
  )
    return;
  const moved: SchemaObject = isRecord(patternProperties) ? patternProperties : {};
  moved[PROTO_PATTERN] = Object.getOwnPropertyDescriptor(properties, '__proto__')?.value;
  delete properties['__proto__'];
  schema.patternProperties = moved;
}

const PROTO_PATTERN = '^__proto__$';
