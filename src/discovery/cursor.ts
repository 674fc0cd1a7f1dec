import { createHash, randomBytes } from 'node:crypto';
import { signPayload, verifiedPayload } from '../auth/signed-payload.ts';

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
    return signPayload(this.#key, [bindingDigest(binding), state.offset, state.issuedAt]);
  }

  /** The state of a cursor issued for exactly this binding and still fresh; otherwise undefined. */
  decode(cursor: string, binding: CursorBinding): CursorState | undefined {
    if (cursor.length > 512) return undefined;
    const decoded = verifiedPayload(this.#key, cursor);
    if (!Array.isArray(decoded) || decoded.length !== 3) return undefined;
    const [digest, offset, issuedAt] = decoded as unknown[];
    if (digest !== bindingDigest(binding)) return undefined;
    if (!Number.isSafeInteger(offset) || (offset as number) < 0 || !Number.isSafeInteger(issuedAt)) return undefined;
    const age = this.#now() - (issuedAt as number);
    if (age < 0 || age > CURSOR_TTL_MS) return undefined;
    return { offset: offset as number, issuedAt: issuedAt as number };
  }
}

function bindingDigest(b: CursorBinding): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        b.principal,
        [...b.scopes].sort(),
        b.catalogueDigest,
        b.revision,
        b.grantsDigest,
        b.query,
        b.limit,
      ]),
    )
    .digest('base64url');
}
