import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../cache/redis.ts';
import { idempotencyKeys } from '../cache/keys.ts';
import { epochScript, freshMarker, guardedWrite, markerCreatedAt, type GuardOptions } from '../cache/guarded-write.ts';
import { runScript, script } from '../cache/scripts.ts';
import { log } from '../telemetry/log.ts';
import {
  claimOf,
  settledRecord,
  type Claim,
  type IdempotencyStore,
  type RecordShape,
  type Settlement,
} from './idempotency-store.ts';

/**
 * Claims a key atomically, first comparing the domain's epoch marker with the
 * one this replica knows: a claim that reaches a server which lost its
 * records (restarted empty, flushed) finds the marker gone or replaced and
 * records nothing. Then SET NX of the PENDING record (kept for the retention)
 * and of its lease (kept for the lease); or, when the record exists, returns
 * it with the lease's remaining time, so a PENDING record without a lease
 * reads as UNKNOWN.
 * KEYS: marker, record, lease. ARGV: known marker ('' for none), a fresh
 * marker, the PENDING text, retention ms, lease ms.
 * Returns {0, marker} (nothing recorded), {1} claimed, {2, record, lease ms}.
 */
const CLAIM = epochScript(`
if redis.call('SET', KEYS[2], ARGV[3], 'NX', 'PX', ARGV[4]) then
  redis.call('SET', KEYS[3], '1', 'PX', ARGV[5])
  return {1}
end
return {2, redis.call('GET', KEYS[2]), redis.call('PTTL', KEYS[3])}
`);

/** KEYS: record, lease. ARGV: one claim's PENDING text. Takes the claim back only if it is still that one's. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1], KEYS[2]) end
return 0
`;

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
  /** How a claim is written (cache/guarded-write.ts): replicas to wait for, and the deadline. */
  readonly guard?: GuardOptions;
  readonly now?: () => number;
}

/** A claim Redis could not vouch for (unreachable, slow, unacknowledged, or after a loss): answered idempotency_unavailable. */
export class IdempotencyUnavailable extends Error {
  override readonly name = 'IdempotencyUnavailable';
}

/**
 * Idempotency records shared by every replica, under the policy domain's hash
 * tag (one Cluster slot). A record whose loss would let a keyed call run twice
 * follows the discipline of cache/guarded-write.ts: the claim is checked
 * against the epoch marker in the same step, acknowledged by replicas when
 * configured, and taken back when it cannot be vouched for. After Redis lost
 * its records, a key may have been used before the loss by a call whose
 * repeat is still to come: claims are refused for one retention period from
 * the marker's replacement, never run unrecorded.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  readonly #client: RedisClient;
  readonly #keys: ReturnType<typeof idempotencyKeys>;
  readonly #retentionMs: number;
  readonly #guard: GuardOptions;
  readonly #now: () => number;
  /** The PENDING text each claim wrote, to compare-and-set on settle. */
  readonly #pending = new Map<string, string>();
  readonly durable = true;
  #epoch: string | undefined;
  /** Claims are refused until then: records were lost, and a repeat of a call run before may still come. */
  #refuseUntil = Number.NEGATIVE_INFINITY;

  constructor(options: RedisIdempotencyOptions) {
    this.#client = options.client;
    this.#keys = idempotencyKeys(options.domain);
    this.#retentionMs = options.retentionMs;
    this.#guard = options.guard ?? { waitReplicas: 0 };
    this.#now = options.now ?? Date.now;
  }

  async claim(scope: string, digest: string, leaseMs: number): Promise<Claim> {
    const token = randomUUID();
    const pending = JSON.stringify({ s: 'P', d: digest, t: token } satisfies RecordShape);
    const record = this.#keys.record(scope);
    const lease = this.#keys.lease(scope);
    // A second pass only after learning the marker: a change in between is not chased.
    for (let pass = 0; pass < 2; pass++) {
      if (this.#now() < this.#refuseUntil) throw new IdempotencyUnavailable();
      const written = await guardedWrite(
        this.#client,
        {
          script: CLAIM,
          keys: [this.#keys.epoch, record, lease],
          args: [
            this.#epoch ?? '',
            freshMarker(this.#now()),
            pending,
            this.#retentionMs,
            Math.max(1, Math.ceil(leaseMs)),
          ],
          undo: { lua: RELEASE, keys: [record, lease], args: [pending] },
          wrote: (reply) => Array.isArray(reply) && reply[0] === 1,
        },
        this.#guard,
      );
      if (!written.ok) throw new IdempotencyUnavailable();
      const reply = written.reply as [number, ...unknown[]];
      if (reply[0] === 0) {
        this.#noteMarker(String(reply[1]));
        continue;
      }
      if (reply[0] === 1) {
        this.#pending.set(`${scope}\u0000${token}`, pending);
        return { kind: 'acquired', token };
      }
      const [, text, pttl] = reply as [number, string | null, number];
      // Expired between the SET NX and the GET: as good as free, but another caller may be claiming it now.
      if (text === null) return { kind: 'in_progress', retryAfterMs: 1 };
      return claimOf(JSON.parse(text) as RecordShape, digest, pttl);
    }
    throw new IdempotencyUnavailable();
  }

  /** A marker other than the one known means the records were lost when it was replaced. */
  #noteMarker(marker: string): void {
    if (this.#epoch !== undefined && this.#epoch !== marker) {
      this.#refuseUntil = Math.max(this.#refuseUntil, markerCreatedAt(marker, this.#now()) + this.#retentionMs);
      log.error(
        'the idempotency records in Redis were lost: keyed calls are refused until every key used before could have been repeated',
        { refuseForMs: Math.max(0, this.#refuseUntil - this.#now()) },
      );
    }
    this.#epoch = marker;
  }

  async settle(scope: string, token: string, how: Settlement): Promise<void> {
    const id = `${scope}\u0000${token}`;
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    const next = settledRecord(JSON.parse(pending) as RecordShape, how);
    await runScript(
      this.#client,
      SETTLE,
      [this.#keys.record(scope), this.#keys.lease(scope)],
      [pending, next === undefined ? '' : JSON.stringify(next), this.#retentionMs],
    );
  }
}
