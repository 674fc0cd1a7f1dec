/**
 * The result half of a `policy test` case: a result the tool returns, put
 * through the result guard exactly as the proxy would (the same
 * `answerGuard`), and compared with what the case expects of it.
 */
import { isDeepStrictEqual } from 'node:util';
import { toolMetadata, type Policy } from '../config/policy/policy.ts';
import type { CatalogueView } from '../catalogue/view.ts';
import { isRecord } from '../json/record.ts';
import type { Classified } from '../mcp/classify.ts';
import { ERROR_META_KEY } from '../mcp/tool-error.ts';
import { guardOffline } from '../pipeline/stages/result-guard.ts';
import { GUARD_META_KEY } from '../results/guard.ts';
import { schemaCaches } from '../validation/schema-caches.ts';

/** What a case expects of the guarded result; only the fields it names are compared. */
export interface ResultExpectation {
  /** The refusal code the result is replaced by (`result_too_large`, `result_blocked`, `result_not_guardable`), or `none`. */
  error?: string;
  /** Matches redacted, by detector id. */
  redacted?: Record<string, number>;
  /** The lint rules whose texts were marked. */
  marked?: string[];
  /** The result's content after the guard, marker nonces written as `NONCE`. */
  content?: unknown[];
  structuredContent?: unknown;
}

export const RESULT_EXPECTATION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    error: { type: 'string', pattern: '^[a-z][a-z0-9_]*$' },
    redacted: { type: 'object', additionalProperties: { type: 'integer', minimum: 1 } },
    marked: { type: 'array', items: { type: 'string' } },
    content: { type: 'array' },
    structuredContent: {},
  },
} as const;

/** Marker nonces are fresh per result; a case writes them as NONCE. */
const NONCE = /\[toolgate [0-9a-f]{8}:/g;

const schemas = schemaCaches();

/** The guarded result as the case's fields describe it, and the case's own expectation in the same words. */
export function guardedOutcome(
  policy: Policy,
  catalogue: CatalogueView,
  tool: string,
  result: Record<string, unknown>,
  expect: ResultExpectation,
): { readonly actual: string; readonly expected: string } {
  const message: Classified = {
    ok: true,
    era: 'modern',
    protocolVersion: undefined,
    kind: 'request',
    id: 'test',
    method: 'tools/call',
    name: tool,
    params: { name: tool, arguments: {} },
  };
  const judged = guardOffline(
    { request: undefined, message, policy, catalogue },
    tool,
    toolMetadata(policy, tool).results,
    { schemas, toolErrors: 'result' },
    result,
  );
  const sent = judged === undefined ? result : resultOf(judged.body);
  const error = errorCode(sent);
  const said = isRecord(sent?._meta) && isRecord(sent._meta[GUARD_META_KEY]) ? sent._meta[GUARD_META_KEY] : {};
  const seen: ResultExpectation = {
    error: error ?? 'none',
    redacted: isRecord(said.redacted) ? (said.redacted as Record<string, number>) : {},
    marked: Array.isArray(said.marked) ? (said.marked as string[]) : [],
    content: JSON.parse(JSON.stringify(sent?.content ?? []).replaceAll(NONCE, '[toolgate NONCE:')) as unknown[],
    structuredContent: sent?.structuredContent,
  };
  const keys = Object.keys(expect) as (keyof ResultExpectation)[];
  const wanted: ResultExpectation = { error: 'none', ...expect };
  const compared = [...new Set<keyof ResultExpectation>(['error', ...keys])];
  const differs = compared.filter((k) => !isDeepStrictEqual(seen[k], wanted[k]));
  const describe = (e: ResultExpectation) => compared.map((k) => `${k}=${JSON.stringify(e[k])}`).join(' ');
  return { actual: describe(seen), expected: differs.length === 0 ? describe(seen) : describe(wanted) };
}

function resultOf(body: string): Record<string, unknown> | undefined {
  const message: unknown = JSON.parse(body);
  if (!isRecord(message)) return undefined;
  if (isRecord(message.result)) return message.result;
  // In protocol form a refusal is a JSON-RPC error: its code is all a case can compare.
  return isRecord(message.error) && isRecord(message.error.data)
    ? { _meta: { [ERROR_META_KEY]: message.error.data } }
    : undefined;
}

function errorCode(result: Record<string, unknown> | undefined): string | undefined {
  const meta = isRecord(result?._meta) ? result._meta[ERROR_META_KEY] : undefined;
  return isRecord(meta) && typeof meta.code === 'string' ? meta.code : undefined;
}
