import { errors, type ErrorId } from '../errors.ts';
import type { ValidationError } from '../validation/types.ts';
import type { Classified } from './classify.ts';
import { withUnavailablePause, type ErrorData } from './jsonrpc.ts';

/** Where a tool-result refusal carries toolgate's machine data, whatever the tool's outputSchema. */
export const ERROR_META_KEY = 'io.toolgate/error';

/** The first protocol version whose tools/call input errors are tool execution errors (SEP-1303). */
const TOOL_RESULT_SINCE = '2025-11-25';
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Failing locations told to the model; the machine data keeps all of them. */
const MAX_TOLD = 8;

/** How a refusal is written: a tool result the model reads, or a JSON-RPC error with this HTTP status. */
export type Wire = { readonly form: 'tool_result' } | { readonly form: 'error'; readonly status: number };

/** The request facts the wire form depends on. */
export interface WireRequest {
  readonly method: string | undefined;
  readonly era: Classified['era'];
  readonly protocolVersion: string | undefined;
}

/**
 * The one decision of how a refusal reaches the client, from what real
 * clients hand on: the v1 SDK client and the v2 client in legacy mode raise
 * any non-2xx answer as a transport exception whose JSON-RPC error sits
 * inside a string, and the v2 client pinned to 2026-07-28 does so for 403
 * and 429. So, in `result` mode:
 *
 * - an HTTP status stays only where the client acts at the HTTP layer: the
 *   refusals marked `keepsStatus` (authentication, step-up, framing, the
 *   session) and any refusal carrying a WWW-Authenticate challenge (scopes
 *   that would help);
 * - on tools/call, everything else is a tool result with `isError: true`,
 *   in every protocol era, except where a protocol error is what that era's
 *   servers send and its clients read: an unknown tool on 2026-07-28, the
 *   -32042 URL elicitation, and argument errors before 2025-11-25 (SEP-1303
 *   made those tool results from then on);
 * - on every other method it is a JSON-RPC error in a 200 answer, as MCP
 *   servers answer.
 *
 * `protocol` mode keeps every refusal's registry status.
 */
export function wireFor(request: WireRequest, error: ErrorId, challenged: boolean, mode: 'result' | 'protocol'): Wire {
  const e = errors[error];
  if (mode === 'protocol' || e.keepsStatus === true || challenged) return { form: 'error', status: e.status };
  if (request.method !== 'tools/call' || e.status === 200) return OK_ERROR;
  if (error === 'unknown_tool' && request.era === 'modern') return OK_ERROR;
  if (e.toolResult === true && !(request.era === 'modern' || sinceToolResults(request.protocolVersion)))
    return OK_ERROR;
  return TOOL_RESULT;
}

const OK_ERROR: Wire = Object.freeze({ form: 'error', status: 200 });
const TOOL_RESULT: Wire = Object.freeze({ form: 'tool_result' });

function sinceToolResults(v: string | undefined): boolean {
  return v !== undefined && DATE.test(v) && v >= TOOL_RESULT_SINCE;
}

/**
 * The refusal as a CallToolResult with `isError: true`: a short text for the
 * model (which argument, which rule, what to do; never a value), the same
 * machine data as `error.data` in `_meta` and, when the tool declares no
 * outputSchema the data would have to satisfy, in `structuredContent`.
 */
export function toolErrorResult(
  error: ErrorId,
  data: ErrorData | undefined,
  structured: boolean,
): Record<string, unknown> {
  const e = errors[error];
  const machine = { code: e.code, retryable: e.retryable, hint: e.hint, ...withUnavailablePause(error, data) };
  return {
    content: [{ type: 'text', text: explain(error, data) }],
    ...(structured && { structuredContent: machine }),
    isError: true,
    _meta: { [ERROR_META_KEY]: machine },
  };
}

function explain(error: ErrorId, data: ErrorData | undefined): string {
  const found = data?.errors ?? [];
  const told = found.slice(0, MAX_TOLD).map((f) => `${where(f.instancePath)} ${rule(f)}`);
  if (found.length > MAX_TOLD) told.push(`and ${found.length - MAX_TOLD} more`);
  const lead = LEADS[error] ?? REFUSED[error]?.(data ?? {}) ?? `toolgate refused the call: ${errors[error].message}`;
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

const seconds = (ms: number | undefined) => Math.max(1, Math.ceil((ms ?? 1000) / 1000));

/**
 * What the model is told for a policy refusal: what happened and what it can
 * do, from the closed machine data only (never an argument, a schema or an
 * upstream's words). A refusal no scope would help never mentions scopes.
 */
const REFUSED: Partial<Record<ErrorId, (d: ErrorData) => string>> = {
  tool_not_granted: (d) =>
    d.reason === 'condition'
      ? "toolgate refused the call: a condition on this caller's grant for this tool does not allow this call. Calling it again unchanged will be refused again; tell the user it is not permitted"
      : d.reason === 'condition_error'
        ? "toolgate refused the call: a condition on this caller's grant for this tool could not be evaluated for these arguments, so it is refused. Tell the user; the operator can see why in the audit log"
        : 'toolgate refused the call: this caller is not granted this tool. Do not retry it; tell the user the tool is not available to them, or ask the operator for a grant',
  rate_limited: (d) =>
    `toolgate refused the call: too many calls. Wait ${seconds(d.retryAfterMs)} s, then call the tool again`,
  call_in_progress: (d) =>
    `toolgate did not run the call: the same call with this idempotency key is still running. Wait ${seconds(d.retryAfterMs)} s, then repeat it unchanged to get its result`,
  tool_contract_changed: () =>
    'toolgate refused the call: this tool changed since the operator approved it, so it is quarantined. Do not retry; tell the user an operator must review the tool',
  validator_denied: () =>
    'toolgate refused the call: a content check refused these arguments. Change what the call asks for, or tell the user it is not permitted',
  approval_required: (d) =>
    `toolgate did not run the call yet: a person must approve it first.${d.url === undefined ? '' : ` Ask the user to open ${d.url} to approve it;`} once it is approved, repeat the call unchanged`,
  approval_denied: () =>
    'toolgate refused the call: an approver denied it, and it will not run. Do not repeat it; tell the user it was denied',
  approval_expired: () =>
    'toolgate did not run the call: its approval expired before it was used. Call the tool again to ask for a new approval',
  approval_outcome_unknown: () =>
    'toolgate did not run this call: its approval was being spent when toolgate lost confirmation, so the approved call may have run. Check its effect with the user before calling again',
  outcome_unknown: () =>
    'toolgate did not run this call: the first call with this idempotency key ended without a result, so it may have run. Check its effect before calling again with a new key',
  idempotency_key_reused: () =>
    'toolgate refused the call: this idempotency key was used for a call with other arguments. Use a new key for a different call',
  unknown_tool: () =>
    'toolgate refused the call: no tool of this name exists on this server. List the tools again and call one of those',
  deadline_exceeded: (d) =>
    d.outcome === 'unknown'
      ? 'toolgate stopped waiting for the call: its deadline passed while it ran, so it may have run. Check its effect before calling again'
      : d.outcome === 'not_started'
        ? 'toolgate did not run the call: its time budget was spent before it could start. Call it again with a larger budget'
        : 'toolgate stopped waiting for the call: its deadline passed. Call it again, with a larger budget if one was set',
  upstream_circuit_open: (d) =>
    `toolgate did not run the call: the tool's server has been failing, so calls to it are paused. Wait ${seconds(d.retryAfterMs)} s, then call the tool again`,
  upstream_unavailable: () =>
    "toolgate could not reach the tool's server, so the call was not answered. Call the tool again later",
  upstream_timeout: () => "toolgate got no answer in time from the tool's server. Call the tool again later",
  idempotency_key_required: () =>
    'toolgate did not run the call: this tool changes state and needs an idempotency key. The client must send an Idempotency-Key header with the call',
  invalid_timeout: () =>
    'toolgate did not run the call: its time budget is not a whole number of milliseconds from 0 to 3600000. The client must correct it',
  grants_unavailable: () =>
    "toolgate did not run the call: it could not confirm this caller's grants just now. Call the tool again in a few seconds",
  approval_unavailable: () =>
    'toolgate did not run the call: its approval store could not be reached. Call the tool again in a few seconds',
  idempotency_unavailable: () =>
    'toolgate did not run the call: its idempotency key could not be recorded. Repeat the call with the same key in a few seconds',
  validator_unavailable: () =>
    'toolgate did not run the call: a content check it requires could not be asked. Call the tool again in a few seconds',
  idempotency_not_durable: () =>
    'toolgate did not run the call: it cannot yet record idempotency keys durably, so it does not run keyed calls of this tool. Tell the user; the operator must give toolgate a journal file or Redis',
  result_too_large: (d) =>
    `toolgate withheld the tool's result: it is ${d.size === undefined ? 'more than' : `${d.size} bytes, more than`} the ${d.limit ?? 0} bytes the policy lets through. Call the tool again asking for less (a narrower query, a smaller page, a filter)`,
  result_blocked: (d) =>
    `toolgate withheld the tool's result: it contains text that reads as instructions to you (${(d.rules ?? []).join(', ')}), which the policy does not let through. Do not retry it; tell the user the result was withheld`,
  result_not_guardable: () =>
    "toolgate withheld the tool's result: it could not be checked or cleaned in a form the tool promises. Tell the user; the operator can see why in the audit log",
  approval_state_invalid: () =>
    'toolgate did not run the call: the approval state sent with it does not belong to this call. Repeat the original call without it',
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
