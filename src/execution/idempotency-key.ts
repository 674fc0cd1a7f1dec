import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { canonicalize } from '../json/canonical.ts';
import type { Classified } from '../mcp/classify.ts';
import type { ToolCall } from '../mcp/tool-call.ts';

/** The IETF httpapi draft's field; its value is a Structured Field string (quoted), a bare token is accepted too. */
export const KEY_HEADER = 'idempotency-key';
/** toolgate's own `params._meta` field, for clients that cannot set headers. */
export const KEY_META = 'io.toolgate/idempotencyKey';

const KEY = /^[\x21-\x7e]{1,255}$/;
const QUOTED = /^"([\x21\x23-\x5b\x5d-\x7e]{1,255})"$/;

export type KeyRead =
  | { readonly kind: 'none' }
  | { readonly kind: 'invalid' }
  | { readonly kind: 'key'; readonly key: string };

const NONE: KeyRead = Object.freeze({ kind: 'none' });
const INVALID: KeyRead = Object.freeze({ kind: 'invalid' });

/**
 * The call's idempotency key from the header, `_meta` or `params.idempotencyKey`
 * (MCP SEP-3182, a draft). Several places must agree; a key given twice in
 * the header, malformed, or different between places is invalid, never
 * silently one of them.
 */
export function readKey(req: IncomingMessage, message: Classified): KeyRead {
  // Read twice on every tools/call: the places are taken in turn, with no list built.
  let key: string | undefined;
  const header = req.headers[KEY_HEADER];
  if (header !== undefined) {
    if (typeof header !== 'string') return INVALID;
    const trimmed = header.trim();
    key = trimmed.startsWith('"') ? QUOTED.exec(trimmed)?.[1] : trimmed;
    if (key === undefined || !KEY.test(key)) return INVALID;
  }
  const params = message.params;
  if (params === undefined) return key === undefined ? NONE : { kind: 'key', key };
  const meta = params._meta;
  const fromMeta = meta !== null && typeof meta === 'object' ? (meta as Record<string, unknown>)[KEY_META] : undefined;
  if (fromMeta !== undefined) {
    if (!agrees(fromMeta, key)) return INVALID;
    key = fromMeta;
  }
  const fromParams = params.idempotencyKey;
  if (fromParams !== undefined) {
    if (!agrees(fromParams, key)) return INVALID;
    key = fromParams;
  }
  return key === undefined ? NONE : { kind: 'key', key };
}

/** A well-formed key, and the same as the one found before it, if any. */
function agrees(v: unknown, before: string | undefined): v is string {
  return typeof v === 'string' && KEY.test(v) && (before === undefined || v === before);
}

/**
 * A key is the caller's own: the same key from another principal, or for
 * another tool, is another record. The scope is a digest, so any principal
 * id or key fits a Redis key and none is stored as given; it is also what the
 * upstream is sent, so two callers' keys never collide there either.
 */
export function scopedKey(principal: string, tool: string, key: string): string {
  // JSON keeps the three apart whatever characters they hold.
  return createHash('sha256')
    .update(JSON.stringify([principal, tool, key]))
    .digest('hex');
}

/**
 * RFC 8785 digest of the call's arguments: the same call in any key order or
 * number spelling has one digest, and an integer a double cannot hold is
 * digested with its digits, so two calls the server reads differently never
 * share one.
 */
export function argumentsDigest(call: ToolCall): string {
  const canonical = canonicalize(call.arguments ?? {});
  // classify admitted the body as JSON, so canonicalization only refuses what
  // JSON cannot hold; such a body digests as its own refusal, never as another call.
  const text = canonical.ok ? canonical.text : `\u0000${canonical.code}`;
  return createHash('sha256').update(text).digest('hex');
}
