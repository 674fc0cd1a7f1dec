/**
 * One-time token ids recorded in Redis, so a token used on one replica is
 * refused on all of them. `SET … NX PX` records the id and tells a first use
 * from a replay in one step, and the key expires with the token.
 *
 * A first use is accepted only when Redis vouches for it:
 * - the write was acknowledged by the master (a replica refuses writes), and,
 *   with `waitReplicas`, by that many replicas (`WAIT`), so a hard failover
 *   cannot promote a replica that never saw it;
 * - the store has not lost its records since the token may have been used.
 *   Each shard of records has an epoch marker beside it. The record is
 *   written by a script that first compares the marker with the one this
 *   replica knows, in the same atomic step: a claim that ioredis re-sends to a
 *   server that restarted empty, or that arrives after a `FLUSHALL`, finds the
 *   marker gone and records nothing. Tokens issued before the marker was
 *   replaced are then refused as `unavailable` until they expire.
 * Anything else (unreachable, slow, unacknowledged) is `unavailable`: the
 * caller gets a retryable 503, never an accepted replay. The write, its WAIT
 * and the compare-and-delete after a missed deadline are cache/guarded-write.ts,
 * which every such record shares.
 */
import { randomUUID } from 'node:crypto';
import { isDomain, REPLAY_SHARDS, replayKeys, replayShardTag, type ReplayKeys } from '../cache/keys.ts';
import { breakerOf, isTimeout, RedisBreakerOpenError, redisCall } from '../cache/breaker.ts';
import { withDeadline } from '../cache/deadline.ts';
import type { RedisClient } from '../cache/redis.ts';
import { epochScript, freshMarker, guardedWrite, markerCreatedAt, sendNow } from '../cache/guarded-write.ts';
import type { ClaimResult, ReplayStore } from './replay-store.ts';

/** Longest token id accepted; longer ids are refused rather than stored. */
const MAX_JTI_LENGTH = 512;

/**
 * KEYS: marker, record. ARGV: the marker this replica knows ('' for none),
 * a fresh marker, the record's TTL in ms, this claim's own value.
 * Returns {1} claimed, {2} already used, or {0, marker} when the marker is
 * not the one known (it is created first when absent): nothing was recorded.
 */
const CLAIM = epochScript(`
if redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[3], 'NX') then return {1} end
return {2}
`);

/** KEYS: record. ARGV: a claim's own value. Deletes the record only if that claim wrote it. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

export interface RedisReplayStoreOptions {
  readonly client: RedisClient;
  /** Policy domain: replicas sharing one-time tokens. */
  readonly domain: string;
  /** Bound on each claim (the Redis command timeout). */
  readonly timeoutMs: number;
  /** Replicas that must acknowledge a recorded id before it counts (0: the master's answer suffices). */
  readonly waitReplicas?: number;
  readonly now?: () => number;
}

export class RedisReplayStore implements ReplayStore {
  readonly #client: RedisClient;
  readonly #domain: string;
  readonly #valid: boolean;
  readonly #timeoutMs: number;
  readonly #waitReplicas: number;
  readonly #now: () => number;
  /** The marker of each shard as first learnt or last vouched for. */
  readonly #epochs: (string | undefined)[] = Array.from({ length: REPLAY_SHARDS }, () => undefined);
  /** Per shard: tokens issued at or before this moment cannot be vouched for. */
  readonly #lostAt: number[] = Array.from({ length: REPLAY_SHARDS }, () => Number.NEGATIVE_INFINITY);
  #learnt: Promise<void> | undefined;

  constructor(options: RedisReplayStoreOptions) {
    this.#client = options.client;
    this.#domain = options.domain;
    this.#valid = isDomain(options.domain);
    this.#timeoutMs = options.timeoutMs;
    this.#waitReplicas = options.waitReplicas ?? 0;
    this.#now = options.now ?? Date.now;
    // A reconnection may be to a server that restarted empty.
    this.#client.on('ready', () => {
      this.#learnt = undefined;
      this.#learnEpochs().catch(() => {});
    });
    // Learnt ahead, so that the first claim does not spend its deadline on it.
    if (this.#valid && this.#client.status === 'ready') this.#learnEpochs().catch(() => {});
  }

  async claim(jti: string, expiresAtMs: number, issuedAtMs: number): Promise<ClaimResult> {
    if (!this.#valid || typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) return 'refused';
    const ttl = Math.ceil(expiresAtMs - this.#now());
    if (!(ttl > 0) || !Number.isSafeInteger(ttl)) return 'refused';
    const keys = replayKeys(this.#domain, jti);
    const own = randomUUID();
    try {
      // The whole claim has one deadline; what it sends goes through the client's breaker, piece by piece
      // (a breaker around the whole claim would be its own probe's refusal).
      return await withDeadline(this.#claim(keys, own, ttl, issuedAtMs), this.#timeoutMs);
    } catch (err) {
      if (err instanceof RedisBreakerOpenError) return 'unavailable';
      // It passes before the sends' own deadlines: the stall is known now, not a moment later.
      if (isTimeout(err)) breakerOf(this.#client).timedOut();
      // Answered 503, so the token was not used; but Redis may still run the claim after the deadline.
      // Sent now, on the same connection, this runs after it and before the retry the 503 invites.
      sendNow(this.#client, { lua: RELEASE, keys: [keys.record], args: [own] });
      return 'unavailable';
    }
  }

  async #claim(keys: ReplayKeys, own: string, ttl: number, issuedAtMs: number): Promise<ClaimResult> {
    await this.#learnEpochs();
    // A second pass only after learning a marker: a third change in between is not chased.
    for (let pass = 0; pass < 2; pass++) {
      if (!(issuedAtMs > this.#lostAt[keys.shard]!)) return 'unavailable';
      const reply = await this.#record(keys, own, ttl);
      if (reply !== 'stale') return reply;
    }
    return 'unavailable';
  }

  /**
   * Reads every shard's marker, creating the missing ones: before the first
   * claim, on every reconnection, and when a claim finds a marker replaced.
   * So a loss is noticed, and its markers re-created, as soon as possible:
   * tokens issued between the loss and that moment cannot be vouched for. And
   * a replaced marker is noticed for every shard, not only for shards this
   * replica happened to claim in. A failed pass is retried by the next claim.
   */
  #learnEpochs(): Promise<void> {
    this.#learnt ??= redisCall(this.#client, this.#timeoutMs, () =>
      Promise.all(
        Array.from({ length: REPLAY_SHARDS }, async (_, shard) => {
          const fresh = this.#fresh();
          const before = await this.#client.set(`${replayShardTag(this.#domain, shard)}:epoch`, fresh, 'NX', 'GET');
          this.#noteMarker(shard, before ?? fresh);
        }),
      ),
    ).then(
      () => undefined,
      (err: unknown) => {
        this.#learnt = undefined;
        throw err;
      },
    );
    return this.#learnt;
  }

  /** A marker other than the one known means the shard lost its records when it was replaced. */
  #noteMarker(shard: number, marker: string): void {
    const known = this.#epochs[shard];
    if (known !== undefined && known !== marker)
      this.#lostAt[shard] = Math.max(this.#lostAt[shard]!, markerCreatedAt(marker, this.#now()));
    this.#epochs[shard] = marker;
  }

  #fresh(): string {
    return freshMarker(this.#now());
  }

  async #record({ marker, record, shard }: ReplayKeys, own: string, ttl: number): Promise<ClaimResult | 'stale'> {
    const written = await guardedWrite(
      this.#client,
      {
        script: CLAIM,
        keys: [marker, record],
        args: [this.#epochs[shard] ?? '', this.#fresh(), ttl, own],
        // Not safely recorded: forget it, so the caller's retry is a first use again.
        undo: { lua: RELEASE, keys: [record], args: [own] },
        wrote: (reply) => Array.isArray(reply) && reply[0] === 1,
      },
      { waitReplicas: this.#waitReplicas, timeoutMs: this.#timeoutMs },
    );
    if (!written.ok) return 'unavailable';
    const reply = written.reply;
    if (!Array.isArray(reply)) return 'unavailable';
    if (reply[0] === 1) return 'claimed';
    if (reply[0] === 2) return 'refused';
    this.#noteMarker(shard, String(reply[1]));
    // The other shards' markers are likely gone too: re-create them now, not at their next claim.
    this.#learnt = undefined;
    this.#learnEpochs().catch(() => {});
    return 'stale';
  }
}
