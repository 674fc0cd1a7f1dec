/**
 * JSON Schema keywords a validation failure can name (2020-12 and draft-07,
 * as ajv reports them). Anything else, including a keyword an upstream schema
 * invents, is counted as `other` so labels stay a closed set.
 */
const KEYWORDS: ReadonlySet<string> = new Set([
  'type',
  'enum',
  'const',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'format',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxContains',
  'minContains',
  'contains',
  'items',
  'prefixItems',
  'additionalItems',
  'unevaluatedItems',
  'maxProperties',
  'minProperties',
  'required',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'properties',
  'patternProperties',
  'additionalProperties',
  'unevaluatedProperties',
  'propertyNames',
  'if',
  'then',
  'else',
  'not',
  'anyOf',
  'oneOf',
  'allOf',
  'false schema',
]);

function keywordLabel(keyword: string): string {
  return KEYWORDS.has(keyword) ? keyword : 'other';
}

/** Distinct labels of one refusal's keywords, in first-seen order. */
export function keywordLabels(keywords: readonly string[]): string[] {
  return [...new Set(keywords.map(keywordLabel))];
}
