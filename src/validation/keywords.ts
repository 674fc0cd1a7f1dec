import type { Dialect } from './types.ts';

/**
 * What each keyword holds, per dialect, so the schema walk knows where
 * subschemas are and which keywords exist at all. A keyword missing here is
 * unknown: it might be a misspelt assertion (`minLenght`) or another dialect's
 * (`nullable`), and enforcing the rest while ignoring it could forward
 * arguments the tool's author meant to reject, so such schemas are refused.
 */
export type KeywordKind =
  /** One subschema. */
  | 'schema'
  /** A non-empty array of subschemas. */
  | 'schemaArray'
  /** An object whose values are subschemas. */
  | 'schemaMap'
  /** An object whose keys are patterns and values subschemas. */
  | 'patternMap'
  /** A subschema or an array of them (draft-07 `items`). */
  | 'schemaOrArray'
  /** An object of subschemas or string arrays (draft-07 `dependencies`). */
  | 'dependencies'
  /** A regular expression. */
  | 'pattern'
  /** Any other value the meta-schema checks; never a subschema. */
  | 'value'
  /** Carries no assertion; never walked into. */
  | 'annotation';

const shared: Record<string, KeywordKind> = {
  $id: 'value',
  $schema: 'value',
  $ref: 'value',
  $comment: 'annotation',
  definitions: 'schemaMap',
  type: 'value',
  enum: 'value',
  const: 'value',
  multipleOf: 'value',
  maximum: 'value',
  exclusiveMaximum: 'value',
  minimum: 'value',
  exclusiveMinimum: 'value',
  maxLength: 'value',
  minLength: 'value',
  pattern: 'pattern',
  maxItems: 'value',
  minItems: 'value',
  uniqueItems: 'value',
  contains: 'schema',
  maxProperties: 'value',
  minProperties: 'value',
  required: 'value',
  properties: 'schemaMap',
  patternProperties: 'patternMap',
  additionalProperties: 'schema',
  propertyNames: 'schema',
  if: 'schema',
  // oxlint-disable-next-line unicorn/no-thenable -- `then` is a JSON Schema keyword, not a promise
  then: 'schema',
  else: 'schema',
  allOf: 'schemaArray',
  anyOf: 'schemaArray',
  oneOf: 'schemaArray',
  not: 'schema',
  // Annotations real tool schemas carry; `format` is deliberately not asserted.
  title: 'annotation',
  description: 'annotation',
  default: 'annotation',
  examples: 'annotation',
  deprecated: 'annotation',
  readOnly: 'annotation',
  writeOnly: 'annotation',
  format: 'annotation',
  contentMediaType: 'annotation',
  contentEncoding: 'annotation',
  // MCP 2026-07-28 (SEP-2243): the parameter is mirrored into an Mcp-Param-{name} header; see param-headers.ts.
  'x-mcp-header': 'annotation',
};

const draft7: Record<string, KeywordKind> = {
  ...shared,
  items: 'schemaOrArray',
  additionalItems: 'schema',
  dependencies: 'dependencies',
};

const draft2020: Record<string, KeywordKind> = {
  ...shared,
  $anchor: 'value',
  $dynamicRef: 'value',
  $dynamicAnchor: 'value',
  $defs: 'schemaMap',
  prefixItems: 'schemaArray',
  items: 'schema',
  minContains: 'value',
  maxContains: 'value',
  dependentRequired: 'value',
  dependentSchemas: 'schemaMap',
  unevaluatedItems: 'schema',
  unevaluatedProperties: 'schema',
  contentSchema: 'annotation',
};

const tables: Readonly<Record<Dialect, ReadonlyMap<string, KeywordKind>>> = Object.freeze({
  'draft-07': new Map(Object.entries(draft7)),
  '2020-12': new Map(Object.entries(draft2020)),
});

export function keywordKind(dialect: Dialect, keyword: string): KeywordKind | undefined {
  return tables[dialect].get(keyword);
}
