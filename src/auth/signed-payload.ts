import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A JSON value that comes back from a client and must be exactly what toolgate
 * issued: `<base64url JSON>.<base64url HMAC-SHA256>`. Discovery cursors,
 * approval request states and approver sessions are all this. `context` is
 * signed in front of the payload, so a token made for one use does not verify
 * for another under the same key.
 */
export function signPayload(key: Buffer, value: unknown, context = ''): string {
  const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${payload}.${mac(key, context, payload)}`;
}

/** The value of a token this key signed for `context`, or undefined for anything else. */
export function verifiedPayload(key: Buffer, token: string, context = ''): unknown {
  const dot = token.indexOf('.');
  if (dot <= 0) return undefined;
  const payload = token.slice(0, dot);
  // The signature's text is compared, not its decoded bytes: base64url's last
  // character carries unused bits, so several spellings decode alike, and a
  // token must be exactly the one issued.
  const given = Buffer.from(token.slice(dot + 1), 'latin1');
  const expected = Buffer.from(mac(key, context, payload), 'latin1');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function mac(key: Buffer, context: string, payload: string): string {
  return createHmac('sha256', key).update(context).update(payload).digest('base64url');
}
