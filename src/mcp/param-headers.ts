import { isRecord } from '../json/record.ts';
import type { ParamHeader } from '../validation/header-declarations.ts';
import { decodeHeaderValue } from './header-value.ts';

/**
 * Whether the request's `Mcp-Param-*` fields disagree with the arguments the
 * schema checked (see validation/header-declarations.ts for why it matters): a
 * value present in one and not the other, or different once decoded.
 * Integers compare as numbers (`42.0` is `42`), by their digits when the
 * header is written as an integer; booleans as `true`/`false`. The arguments
 * are those of `callArguments`, so an integer a double cannot hold is exact.
 */
export function paramHeadersDisagree(
  declared: readonly ParamHeader[],
  args: unknown,
  headers: Readonly<Record<string, string | string[] | undefined>>,
): boolean {
  for (const { field, path } of declared) {
    const raw = headers[field];
    if (Array.isArray(raw)) return true;
    const value = valueAt(args, path);
    // Only primitives can be mirrored; the schema decides about anything else.
    if (typeof value === 'object' && value !== null) continue;
    if (value === undefined || value === null) {
      if (raw !== undefined) return true;
      continue;
    }
    if (raw === undefined) return true;
    const text = decodeHeaderValue(raw);
    if (text === undefined || !sameValue(text, value)) return true;
  }
  return false;
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let node = args;
  for (const key of path) {
    if (!isRecord(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

function sameValue(text: string, value: unknown): boolean {
  if (typeof value === 'string') return text === value;
  if (typeof value === 'boolean') return text === String(value);
  // An integer header against an integer argument compares digits: Number()
  // would round both sides above 2^53 and call two numbers equal.
  if ((typeof value === 'number' && Number.isInteger(value)) || typeof value === 'bigint') {
    const digits = text.trim();
    if (INTEGER.test(digits)) return BigInt(digits) === BigInt(value);
  }
  if (typeof value === 'number') return text.trim() !== '' && Number(text) === value;
  return false;
}

const INTEGER = /^-?\d+$/;
