export { compileToolSchema, MAX_REPORTED_ERRORS } from './compile.ts';
export { SchemaCache } from './cache.ts';
export { checkBounds, DEFAULT_BOUNDS, MAX_ARGUMENT_DEPTH, MAX_ARGUMENT_NODES, MAX_STRING_CODE_UNITS } from './bounds.ts';
export { MAX_PATTERN_LENGTH } from './regex.ts';
export { MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES } from './walk.ts';
export { UNSUPPORTED_REASONS } from './types.ts';
export type { CompileResult, UnsupportedReason, Validate, ValidationError, ValidationResult } from './types.ts';
