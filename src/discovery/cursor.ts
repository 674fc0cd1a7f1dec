import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A cursor lives at most this long from the first page; paging does not renew it. */
export const CURSOR_TTL_MS = 120_000;

/** Everything a cursor is bound to; any difference makes it invalid. */
export interface CursorBinding {
  readonly principal: string;
  readonly scopes: readonly string[];
  readonly catalogueDigest: string;
  readonly revision: number;
  readonly grantsDigest: string;
  readonly query: string;
  readonly limit: number;
}

export interface CursorState {
  readonly offset: number;
  /** When the first page was served (epoch ms). */
  readonly issuedAt: number;
}

/**
 * HMAC-SHA256 cursors with a key made in memory at start: never logged,
 * stored or returned, so a restart (or another replica) simply invalidates
 * outstanding cursors, and the client starts over. The payload carries only
 * a digest of the binding, never the query or the principal in clear.
 */
export class CursorCodec {
  readonly #key: Buffer;
  readonly #now: () => number;

  constructor(now: () => number = Date.now, key: Buffer = randomBytes(32)) {
    this.#key = key;
    this.#now = now;
  }

  encode(binding: CursorBinding, state: CursorState): string {
    const payload = Buffer.from(JSON.stringify([bindingDigest(binding), state.offset, state.issuedAt])).toString('base64url');
    return `${payload}.${this.#sign(payload)}`;
  }

  /** The state of a cursor issued for exactly this binding and still fresh; otherwise undefined. */
  decode(cursor: string, binding: CursorBinding): CursorState | undefined {
    if (cursor.length > 512) return undefined;
    const dot = cursor.indexOf('.');
    if (dot <= 0) return undefined;
    const payload = cursor.slice(0, dot);
    // The signature's text is compared, not its decoded bytes: base64url's last
    // character carries unused bits, so several spellings decode alike, and a
    // cursor must be exactly the one issued.
    const given = Buffer.from(cursor.slice(dot + 1), 'latin1');
    const expected = Buffer.from(this.#sign(payload), 'latin1');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    if (!Array.isArray(decoded) || decoded.length !== 3) return undefined;
    const [digest, offset, issuedAt] = decoded as unknown[];
    if (digest !== bindingDigest(binding)) return undefined;
    if (!Number.isSafeInteger(offset) || (offset as number) < 0 || !Number.isSafeInteger(issuedAt)) return undefined;
    const age = this.#now() - (issuedAt as number);
    if (age < 0 || age > CURSOR_TTL_MS) return undefined;
    return { offset: offset as number, issuedAt: issuedAt as number };
  }

  #sign(payload: string): string {
    return createHmac('sha256', this.#key).update(payload).digest('base64url');
  }
}

function bindingDigest(b: CursorBinding): string {
  return createHash('sha256')
    .update(JSON.stringify([b.principal, [...b.scopes].sort(), b.catalogueDigest, b.revision, b.grantsDigest, b.query, b.limit]))
    .digest('base64url');
}
