import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

/**
 * Hop-by-hop fields (RFC 9110 §7.6.1) describe one connection, not the
 * message, so a proxy must not forward them in either direction. Fields named
 * in `Connection` are hop-by-hop too. Requests also lose Content-Length,
 * because the forwarded body may be framed differently (undici recomputes
 * it), and Expect: toolgate's own server has already answered
 * `100-continue`, the upstream gets the body in one go, and undici refuses
 * the field outright (curl sends it for every body over 1 KiB).
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

const REQUEST_ONLY = new Set(['content-length', 'expect']);
/** What a forwarded request never carries, in one set: one lookup per field on every request. */
const NOT_FORWARDED = new Set([...HOP_BY_HOP, ...REQUEST_ONLY]);

function connectionTokens(value: string | string[] | undefined): Set<string> | undefined {
  // The usual values name only fields that are hop-by-hop anyway.
  if (value === undefined || value === 'keep-alive' || value === 'close') return undefined;
  const joined = Array.isArray(value) ? value.join(',') : value;
  const tokens = new Set<string>();
  for (const t of joined.split(',')) {
    const token = t.trim().toLowerCase();
    if (token) tokens.add(token);
  }
  return tokens.size > 0 ? tokens : undefined;
}

/**
 * Credentials toolgate verified itself: passing a client's token on to the
 * server would let the server replay it elsewhere (MCP forbids token
 * passthrough), so they are dropped when toolgate authenticates.
 */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'x-api-key']);

/**
 * Fields a header carrying the caller's identity to the server must not be:
 * ones the connection, the framing, routing, tracing, MCP or a credential
 * already own, where a second meaning would break or spoof them.
 */
const NOT_IDENTITY = new Set([
  ...NOT_FORWARDED,
  ...CREDENTIAL_HEADERS,
  'host',
  'cookie',
  'origin',
  'accept',
  'accept-encoding',
  'content-type',
  'content-encoding',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'traceparent',
  'tracestate',
  'baggage',
  'last-event-id',
]);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Whether `name` may carry the principal upstream (an HTTP token, none of the fields above, no `Mcp-` field). */
export function isIdentityHeaderName(name: string): boolean {
  const lower = name.toLowerCase();
  return TOKEN.test(name) && !NOT_IDENTITY.has(lower) && !lower.startsWith('mcp-');
}

const MCP_FIELDS = new Set(['mcp-protocol-version', 'mcp-method', 'mcp-name', 'mcp-session-id']);
/** Tool parameters mirrored into headers (2026-07-28, `x-mcp-header`). */
const PARAM_PREFIX = 'mcp-param-';

/** The `Mcp-Param-*` field names a request carries, lower-cased. */
export function paramFields(rawHeaders: readonly string[]): string[] {
  const found: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const raw = rawHeaders[i] as string;
    if (!mayBeMcpField(raw)) continue;
    const name = raw.toLowerCase();
    if (name.startsWith(PARAM_PREFIX)) found.push(name);
  }
  return found;
}

/** Most fields are not MCP's: tell by the first letter before copying the name to lower case. */
function mayBeMcpField(name: string): boolean {
  return name.length >= 8 && (name.charCodeAt(0) | 0x20) === 0x6d;
}

/**
 * Whether an MCP field (`Mcp-Param-*` included) comes more than once. Node joins the copies into one
 * value toolgate reads ("2026-07-28, 2026-07-28" is no version at all),
 * while servers may take the first or the last copy.
 */
export function repeatsMcpField(rawHeaders: readonly string[]): boolean {
  // Most requests carry one MCP field (the version): a set only from the second.
  let first: string | undefined;
  let seen: Set<string> | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const raw = rawHeaders[i] as string;
    if (!mayBeMcpField(raw)) continue;
    const name = raw.toLowerCase();
    if (!MCP_FIELDS.has(name) && !name.startsWith(PARAM_PREFIX)) continue;
    if (first === undefined) {
      first = name;
      continue;
    }
    seen ??= new Set([first]);
    if (seen.has(name)) return true;
    seen.add(name);
  }
  return false;
}

/** Request fields to send upstream, as a flat [name, value, …] list. */
export function upstreamRequestHeaders(req: IncomingMessage, drop?: ReadonlySet<string>): string[] {
  const raw = req.rawHeaders;
  const extra = connectionTokens(req.headers.connection);
  const out: string[] = [];
  let forwardedFor: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    const lower = name.toLowerCase();
    if (NOT_FORWARDED.has(lower) || extra?.has(lower) || drop?.has(lower)) continue;
    if (lower === 'x-forwarded-for') {
      forwardedFor = forwardedFor === undefined ? (raw[i + 1] as string) : `${forwardedFor}, ${raw[i + 1] as string}`;
      continue;
    }
    out.push(name, raw[i + 1] as string);
  }
  const peer = req.socket.remoteAddress;
  if (peer !== undefined) {
    out.push('x-forwarded-for', forwardedFor === undefined ? peer : `${forwardedFor}, ${peer}`);
  } else if (forwardedFor !== undefined) {
    out.push('x-forwarded-for', forwardedFor);
  }
  return out;
}

/** Upstream response fields to send to the client. */
export function clientResponseHeaders(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
): Record<string, string | string[]> {
  const extra = connectionTokens(headers.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name) || extra?.has(name)) continue;
    out[name] = value;
  }
  return out;
}
