import { errors, type ErrorId } from '../errors.ts';
import type { ValidationError } from '../validation/types.ts';
import type { Classified } from './classify.ts';
import type { ErrorData } from './jsonrpc.ts';

/** Where a tool-result refusal carries toolgate's machine data, whatever the tool's outputSchema. */
export const ERROR_META_KEY = 'io.toolgate/error';

/** The first protocol version whose tools/call input errors are tool execution errors (SEP-1303). */
const TOOL_RESULT_SINCE = '2025-11-25';
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Failing locations told to the model; the machine data keeps all of them. */
const MAX_TOLD = 8;

/**
 * Whether a refusal goes to the model as a tool result rather than to the
 * client as a protocol error: a tools/call on 2025-11-25 or later, refused
 * for something the model can change in its call.
 */
export function answersAsToolResult(message: Classified, error: ErrorId): boolean {
  if (message.method !== 'tools/call' || errors[error].toolResult !== true) return false;
  if (message.era === 'modern') return true;
  const v = message.protocolVersion;
  return v !== undefined && DATE.test(v) && v >= TOOL_RESULT_SINCE;
}

/**
 * The refusal as a CallToolResult with `isError: true`: a short text for the
 * model (which argument, which rule, what to do; never a value), the same
 * machine data as `error.data` in `_meta` and, when the tool declares no
 * outputSchema the data would have to satisfy, in `structuredContent`.
 */
export function toolErrorResult(error: ErrorId, data: ErrorData | undefined, structured: boolean): Record<string, unknown> {
  const e = errors[error];
  const machine = { code: e.code, retryable: e.retryable, hint: e.hint, ...data };
  return {
    content: [{ type: 'text', text: explain(error, data?.errors ?? []) }],
    ...(structured && { structuredContent: machine }),
    isError: true,
    _meta: { [ERROR_META_KEY]: machine },
  };
}

function explain(error: ErrorId, found: readonly ValidationError[]): string {
  const told = found.slice(0, MAX_TOLD).map((f) => `${where(f.instancePath)} ${rule(f)}`);
  if (found.length > MAX_TOLD) told.push(`and ${found.length - MAX_TOLD} more`);
  const lead = LEADS[error] ?? errors[error].message;
  return `${lead}${told.length === 0 ? '' : `: ${told.join('; ')}`}. ${NEXT[error] ?? ''}`.trimEnd();
}

const LEADS: Partial<Record<ErrorId, string>> = {
  invalid_arguments: "toolgate refused the call: the arguments do not match the tool's inputSchema",
  case_variant_key: 'toolgate refused the call: an argument name differs from a declared property only in letter case',
  inexact_number: 'toolgate refused the call: an integer argument has more digits than can be checked exactly',
};

const NEXT: Partial<Record<ErrorId, string>> = {
  invalid_arguments: 'Correct the arguments and call the tool again.',
  case_variant_key: 'Use the exact property name from the inputSchema and call the tool again.',
  inexact_number: 'Send an integer between -(2^53-1) and 2^53-1 and call the tool again.',
};

function where(pointer: string): string {
  return pointer === '' ? 'the arguments object' : `argument ${pointer}`;
}

const PHRASES: Readonly<Record<string, string>> = {
  type: 'has the wrong type',
  enum: 'is not one of the allowed values',
  const: 'is not one of the allowed values',
  minimum: 'is below the allowed range',
  exclusiveMinimum: 'is below the allowed range',
  maximum: 'is above the allowed range',
  exclusiveMaximum: 'is above the allowed range',
  multipleOf: 'is not a multiple of the required step',
  minLength: 'is too short',
  maxLength: 'is too long',
  pattern: 'does not match the required pattern',
  format: 'does not match the required format',
  minItems: 'has too few items',
  maxItems: 'has too many items',
  uniqueItems: 'has duplicate items',
  minProperties: 'has too few properties',
  maxProperties: 'has too many properties',
  properties: 'differs from a declared property name only in letter case',
  precision: 'is an integer too long to check exactly',
};

function rule(f: ValidationError): string {
  if (f.keyword === 'required' && f.missing !== undefined && f.missing.length > 0) {
    return `is missing the required ${f.missing.length === 1 ? 'property' : 'properties'} ${f.missing.map((m) => JSON.stringify(m)).join(', ')}`;
  }
  if (f.keyword === 'additionalProperties' && f.count !== undefined) {
    return `has ${f.count} ${f.count === 1 ? 'property' : 'properties'} the schema does not allow`;
  }
  return PHRASES[f.keyword] ?? `fails the ${JSON.stringify(f.keyword)} rule`;
}
