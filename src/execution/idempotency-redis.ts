import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../cache/redis.ts';
import { idempotencyKeys } from '../cache/keys.ts';
import { runScript, script } from '../cache/scripts.ts';
import { claimOf, settledRecord, type Claim, type IdempotencyStore, type RecordShape, type Settlement } from './idempotency-store.ts';

/**
 * Claims a key atomically: SET NX of the PENDING record (kept for the
 * retention) and of its lease (kept for the lease), in one round trip; or,
 * when the record exists, returns it with the lease's remaining time, so a
 * PENDING record without a lease reads as UNKNOWN.
 */
const CLAIM = script(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
  return false
end
return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[2])}
`);

/** Replaces the record only while it is still this holder's PENDING one (compared as stored text). */
const SETTLE = script(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2])
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
return 1
`);

export interface RedisIdempotencyOptions {
  readonly client: RedisClient;
  readonly domain: string;
  readonly retentionMs: number;
}

/** Idempotency records shared by every replica, under the policy domain's hash tag (one Cluster slot). */
export class RedisIdempotencyStore implements IdempotencyStore {
  readonly #client: RedisClient;
  readonly #keys: ReturnType<typeof idempotencyKeys>;
  readonly #retentionMs: number;
  /** The PENDING text each claim wrote, to compare-and-set on settle. */
  readonly #pending = new Map<string, string>();

  constructor(options: RedisIdempotencyOptions) {
    this.#client = options.client;
    this.#keys = idempotencyKeys(options.domain);
    this.#retentionMs = options.retentionMs;
  }

  async claim(scope: string, digest: string, leaseMs: number): Promise<Claim> {
    const token = randomUUID();
    const pending = JSON.stringify({ s: 'P', d: digest, t: token } satisfies RecordShape);
    const reply = await runScript(this.#client, CLAIM, [this.#keys.record(scope), this.#keys.lease(scope)], [pending, this.#retentionMs, Math.max(1, Math.ceil(leaseMs))]);
    if (reply === null) {
      this.#pending.set(`${scope}\u0000${token}`, pending);
      return { kind: 'acquired', token };
    }
    const [text, pttl] = reply as [string | null, number];
    // Expired between the SET NX and the GET: as good as free, but another caller may be claiming it now.
    if (text === null) return { kind: 'in_progress', retryAfterMs: 1 };
    return claimOf(JSON.parse(text) as RecordShape, digest, pttl);
  }

  async settle(scope: string, token: string, how: Settlement): Promise<void> {
    const id = `${scope}\u0000${token}`;
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    const next = settledRecord(JSON.parse(pending) as RecordShape, how);
    await runScript(this.#client, SETTLE, [this.#keys.record(scope), this.#keys.lease(scope)], [pending, next === undefined ? '' : JSON.stringify(next), this.#retentionMs]);
  }
}
