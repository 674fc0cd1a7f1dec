import { isUtf8 } from 'node:buffer';

/**
 * The MCP header value convention (SEP-2243): a value that is not plain
 * visible ASCII travels as `=?base64?<UTF-8, standard Base64>?=`, and so
 * does one that looks like that sentinel, so every value has one reading.
 */

const PREFIX = '=?base64?';
const SUFFIX = '?=';
const BASE64_BODY = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const PLAIN_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The header value for any string. */
export function encodeHeaderValue(value: string): string {
  if (PLAIN_VALUE.test(value) && !value.startsWith(PREFIX)) return value;
  return `${PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${SUFFIX}`;
}

/**
 * The string a header value carries: the sentinel decoded, anything else as
 * it is. A malformed sentinel yields undefined, which never equals a body value.
 */
export function decodeHeaderValue(raw: string): string | undefined {
  if (!(raw.startsWith(PREFIX) && raw.endsWith(SUFFIX))) return raw;
  if (raw.length < PREFIX.length + SUFFIX.length) return undefined;
  const b64 = raw.slice(PREFIX.length, raw.length - SUFFIX.length);
  if (!BASE64_BODY.test(b64)) return undefined;
  const bytes = Buffer.from(b64, 'base64');
  if (!isUtf8(bytes)) return undefined;
  return strictUtf8.decode(bytes);
}
