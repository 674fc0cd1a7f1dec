import type { JsonRpcId } from './jsonrpc.ts';
import { foldName } from '../json/fold-name.ts';
import { isRecord } from '../json/record.ts';
import { hasDuplicateKeys } from '../json/duplicate-keys.ts';
import { decodeHeaderValue } from './header-value.ts';
import { parseExact } from '../json/exact.ts';
import { findInexactInteger, holdsUnsafeMagnitude } from '../json/inexact-integers.ts';
import { nestsDeeperThan } from '../json/scan.ts';

/**
 * Classifies one POSTed MCP message. Pure and total: every input, however
 * hostile, yields a value; nothing here throws.
 *
 * The body is the authority. Headers are only trusted as a cross-check, and
 * only when the exchange claims the 2026-07-28 revision (which defines them):
 * headers that arrive with an older or missing protocol version are ignored,
 * because 2025 clients never send them and anything there came from elsewhere.
 */

/** The first revision that defines Mcp-Method / Mcp-Name and the _meta envelope. */
const MODERN_REVISION = '2026-07-28';
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

/** Which body field `Mcp-Name` mirrors, per method (SEP-2243 and SEP-2663). */
const NAME_FIELD: ReadonlyMap<string, string> = new Map([
  ['tools/call', 'name'],
  ['prompts/get', 'name'],
  ['resources/read', 'uri'],
  ['tasks/get', 'taskId'],
  ['tasks/update', 'taskId'],
  ['tasks/cancel', 'taskId'],
]);

const VERSION_SHAPE = /^\d{4}-\d{2}-\d{2}$/;
const METHOD_SHAPE = /^[\x21-\x7e]+$/;
const ARGUMENTS_PATH: readonly string[] = ['params', 'arguments'];
/** Deeper than any MCP message needs; tools/call arguments are held to 32 levels besides. */
export const MAX_NESTING = 512;
const SHALLOW_BODY_CHARS = 2 * MAX_NESTING;

/** The JSON-RPC members, and the params members toolgate decides on. */
const ENVELOPE_FIELDS = foldedFields(['jsonrpc', 'id', 'method', 'params', 'result', 'error']);
const PARAM_FIELDS = foldedFields(['name', 'arguments', '_meta', 'uri', 'taskId', 'cursor']);

interface FoldedFields {
  readonly exact: ReadonlySet<string>;
  readonly folded: ReadonlySet<string>;
}

function foldedFields(names: readonly string[]): FoldedFields {
  return { exact: new Set(names), folded: new Set(names.map(foldName)) };
}

/** Whether a member name differs from one of `fields` only as Go's field matching ignores. */
function hasCaseVariant(object: Record<string, unknown>, fields: FoldedFields): boolean {
  for (const key in object) {
    if (!fields.exact.has(key) && fields.folded.has(foldName(key))) return true;
  }
  return false;
}

export interface McpHeaders {
  readonly protocolVersion?: string | undefined;
  readonly method?: string | undefined;
  readonly name?: string | undefined;
}

type Era = 'modern' | 'legacy';
type MessageKind = 'request' | 'notification' | 'response';

export interface Classified {
  readonly ok: true;
  readonly era: Era;
  readonly protocolVersion: string | undefined;
  readonly kind: MessageKind;
  /** The request id; null for notifications and id-less responses. */
  readonly id: JsonRpcId;
  readonly method: string | undefined;
  /** Tool or prompt name, resource URI or task id, from the body. */
  readonly name: string | undefined;
  readonly params: Readonly<Record<string, unknown>> | undefined;
  /**
   * For tools/call: the JSON pointer, inside the arguments, of the first
   * integer JSON.parse could not read exactly (see inexact-integers.ts).
   */
  readonly inexactInteger?: string | undefined;
  /**
   * With `inexactInteger`: the arguments read exactly, such integers as
   * `bigint` (see json/exact.ts). Read them through `callArguments`.
   */
  readonly exactArguments?: unknown;
}

/**
 * The tools/call arguments whose values toolgate decides on: as JSON.parse
 * read them, unless that rounded an integer, then as written. Schema
 * validation takes `params.arguments` instead (ajv knows no `bigint`) and
 * refuses such integers where it compares values.
 */
export function callArguments(message: Classified): unknown {
  return message.exactArguments ?? message.params?.arguments;
}

/** The exact reading of `arguments` inside `text` (see `callArguments`), only when an integer there was rounded. */
export function exactArgumentsOf(text: string, inexactInteger: string | undefined, within: readonly string[]): unknown {
  if (inexactInteger === undefined) return undefined;
  let node = parseExact(text);
  for (const key of within) node = isRecord(node) ? node[key] : undefined;
  return node;
}

interface Rejected {
  readonly ok: false;
  readonly code:
    | 'parse_error'
    | 'nesting_too_deep'
    | 'duplicate_key'
    | 'case_variant_key'
    | 'invalid_request'
    | 'header_mismatch';
  /** The request id when one was readable, so the error can carry it. */
  readonly id: JsonRpcId;
}

export type Classification = Classified | Rejected;

export function classify(headers: McpHeaders, body: Uint8Array): Classification {
  const parsed = parseJson(body);
  if (!parsed.ok) return reject(parsed.code, null);
  // For the same reason: a repeated member name is read differently by different parsers.
  if (hasDuplicateKeys(parsed.text, parsed.value)) return reject('duplicate_key', null);
  const msg = parsed.value;
  if (!isRecord(msg)) return reject('invalid_request', null);

  const id = readId(msg);
  if (id === undefined) return reject('invalid_request', null);
  // A Go server would read "Method" or "paramſ" as the field toolgate did not check.
  if (hasCaseVariant(msg, ENVELOPE_FIELDS)) return reject('case_variant_key', id);
  if (msg.jsonrpc !== '2.0') return reject('invalid_request', id);

  const hasMethod = Object.hasOwn(msg, 'method');
  if (!hasMethod) {
    const isResponse = Object.hasOwn(msg, 'result') !== Object.hasOwn(msg, 'error');
    if (!isResponse || !Object.hasOwn(msg, 'id')) return reject('invalid_request', id);
    return accept('legacy', headers.protocolVersion, 'response', id, undefined, undefined, undefined);
  }
  const method = msg.method;
  // Visible ASCII only: every MCP method is, and a server that trims, folds or
  // stops at a control character could read "tools/call\u0000" as a call
  // toolgate never checked.
  if (typeof method !== 'string' || !METHOD_SHAPE.test(method)) return reject('invalid_request', id);
  const rawParams = msg.params;
  if (rawParams !== undefined && !isRecord(rawParams) && !Array.isArray(rawParams)) {
    return reject('invalid_request', id);
  }
  const params = isRecord(rawParams) ? rawParams : undefined;
  if (params !== undefined && hasCaseVariant(params, PARAM_FIELDS)) return reject('case_variant_key', id);
  const kind: MessageKind = Object.hasOwn(msg, 'id') ? 'request' : 'notification';
  if (kind === 'request' && id === null) return reject('invalid_request', null);

  const field = NAME_FIELD.get(method);
  const bodyName =
    field !== undefined && params !== undefined && typeof params[field] === 'string' ? params[field] : undefined;

  const inexactInteger =
    method === 'tools/call' && holdsUnsafeMagnitude(params?.arguments)
      ? findInexactInteger(parsed.text, ARGUMENTS_PATH)
      : undefined;
  const exact = exactArgumentsOf(parsed.text, inexactInteger, ARGUMENTS_PATH);
  const envelopeVersion = readEnvelopeVersion(params);
  const headerVersion = headers.protocolVersion;
  const modern = isModern(envelopeVersion) || isModern(headerVersion);
  if (!modern) {
    return accept(
      'legacy',
      envelopeVersion ?? headerVersion,
      kind,
      id,
      method,
      bodyName,
      params,
      inexactInteger,
      exact,
    );
  }

  if (headerVersion !== undefined && envelopeVersion !== undefined && headerVersion !== envelopeVersion) {
    return reject('header_mismatch', id);
  }
  const required = kind === 'request';
  if (headerVersion === undefined && required) return reject('header_mismatch', id);
  if (headers.method === undefined) {
    if (required) return reject('header_mismatch', id);
  } else if (headers.method !== method) {
    return reject('header_mismatch', id);
  }
  if (field !== undefined) {
    if (headers.name === undefined) {
      if (required && bodyName !== undefined) return reject('header_mismatch', id);
    } else if (decodeHeaderValue(headers.name) !== bodyName) {
      return reject('header_mismatch', id);
    }
  }
  return accept('modern', envelopeVersion ?? headerVersion, kind, id, method, bodyName, params, inexactInteger, exact);
}

/**
 * The method a request names in its headers, when they alone may be trusted
 * to say it: the exchange claims 2026-07-28 or later in MCP-Protocol-Version
 * and sends a well-formed Mcp-Method. A proxy that decides nothing on the
 * message can route and count on that without reading the body; the server,
 * which processes the body, must refuse a body that disagrees (the revision's
 * "Server Validation"). Undefined otherwise: the body has to be read.
 */
export function methodFromHeaders(headers: McpHeaders): string | undefined {
  const method = headers.method;
  if (!isModern(headers.protocolVersion) || method === undefined || !METHOD_SHAPE.test(method)) return undefined;
  return method;
}

/** The JSON-RPC id of a body, for an error answered after all: null when it has none or cannot be read. */
export function idOfBody(headers: McpHeaders, body: Uint8Array): JsonRpcId {
  return classify(headers, body).id;
}

function isModern(version: string | undefined): boolean {
  return version !== undefined && VERSION_SHAPE.test(version) && version >= MODERN_REVISION;
}

/**
 * Checks and decodes in one pass. Invalid UTF-8 is refused rather than
 * replaced with U+FFFD: toolgate and the upstream must never decide on
 * different readings of the same bytes. A byte order mark is kept, as
 * written, so JSON.parse refuses it as it always did.
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function parseJson(
  body: Uint8Array,
): { ok: true; value: unknown; text: string } | { ok: false; code: 'parse_error' | 'nesting_too_deep' } {
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    return { ok: false, code: 'parse_error' };
  }
  // JSON.parse spends about 120 ns a level: a megabyte of brackets would cost
  // a third of a second. A short body cannot nest deep enough to matter.
  if (text.length > SHALLOW_BODY_CHARS && nestsDeeperThan(text, MAX_NESTING))
    return { ok: false, code: 'nesting_too_deep' };
  try {
    return { ok: true, value: JSON.parse(text), text };
  } catch {
    return { ok: false, code: 'parse_error' };
  }
}

function readId(msg: Record<string, unknown>): JsonRpcId | undefined {
  if (!Object.hasOwn(msg, 'id')) return null;
  const id = msg.id;
  if (typeof id === 'string' || id === null) return id;
  if (typeof id === 'number' && Number.isFinite(id)) return id;
  return undefined;
}

function readEnvelopeVersion(params: Record<string, unknown> | undefined): string | undefined {
  const meta = params?._meta;
  if (!isRecord(meta)) return undefined;
  const v = meta[PROTOCOL_VERSION_META_KEY];
  return typeof v === 'string' ? v : undefined;
}

function reject(code: Rejected['code'], id: JsonRpcId): Rejected {
  return { ok: false, code, id };
}

function accept(
  era: Era,
  protocolVersion: string | undefined,
  kind: MessageKind,
  id: JsonRpcId,
  method: string | undefined,
  name: string | undefined,
  params: Record<string, unknown> | undefined,
  inexactInteger?: string,
  exactArguments?: unknown,
): Classified {
  return { ok: true, era, protocolVersion, kind, id, method, name, params, inexactInteger, exactArguments };
}
