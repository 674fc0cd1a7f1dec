import { checkBounds } from './bounds.ts';
import { metaSchemaAccepts, newCompiler } from './engine.ts';
import { findUnsafeShape } from './unsafe-shapes.ts';
import type { CompileResult, ValidationError, ValidationResult } from './types.ts';
import { walkSchema } from './walk.ts';

/** Enough for an agent to fix its call; more would only grow the response. */
export const MAX_REPORTED_ERRORS = 32;

interface AjvError {
  readonly instancePath: string;
  readonly keyword: string;
}

/**
 * Compiles a tool's inputSchema into a validator, or says why it cannot be
 * enforced. Total: never throws, whatever `schema` is. The schema is copied
 * first, so later changes to the caller's object cannot change enforcement.
 */
export function compileToolSchema(schema: unknown): CompileResult {
  let copy: unknown;
  try {
    const text = JSON.stringify(schema);
    if (text === undefined) return { ok: false, reason: 'malformed_schema' };
    copy = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: e instanceof RangeError ? 'schema_too_large' : 'malformed_schema' };
  }

  const walked = walkSchema(copy);
  if (!walked.ok) return walked;
  if (findUnsafeShape(walked.nodes, walked.dialect)) return { ok: false, reason: 'unsupported_shape' };
  if (!metaSchemaAccepts(walked.dialect, copy)) return { ok: false, reason: 'malformed_schema' };

  let check: ((data: unknown) => boolean) & { errors?: readonly AjvError[] | null | undefined };
  try {
    check = newCompiler(walked.dialect).compile(copy as object);
  } catch (e) {
    const missingRef = typeof e === 'object' && e !== null && 'missingRef' in e;
    return { ok: false, reason: missingRef ? 'remote_ref' : 'malformed_schema' };
  }
  return { ok: true, validate: (args) => run(check, args) };
}

function run(
  check: ((data: unknown) => boolean) & { errors?: readonly AjvError[] | null | undefined },
  args: unknown,
): ValidationResult {
  const bounds = checkBounds(args);
  if (!bounds.ok) {
    if (bounds.code === 'bounds_exceeded') return bounds;
    return { ok: false, code: 'invalid_arguments', errors: [{ instancePath: bounds.instancePath, keyword: 'type' }] };
  }
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

function summarise(found: readonly AjvError[]): ValidationError[] {
  const seen = new Set<string>();
  const errors: ValidationError[] = [];
  for (const { instancePath, keyword } of found) {
    const key = `${keyword}\u0000${instancePath}`;
    if (seen.has(key)) continue;
    seen.add(key);
    errors.push({ instancePath, keyword });
    if (errors.length === MAX_REPORTED_ERRORS) break;
  }
  return errors;
}
