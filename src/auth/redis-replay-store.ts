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
 *   An epoch marker, re-read on every (re)connection, tells: when it is gone
 *   or replaced, Redis lost data, and tokens issued before that moment are
 *   refused as `unavailable` until they expire.
 * Anything else (unreachable, slow, unacknowledged) is `unavailable`: the
 * caller gets a retryable 503, never an accepted replay.
 */
import { randomUUID } from 'node:crypto';
import { isDomain } from '../cache/keys.ts';
import { withDeadline, type RedisClient } from '../cache/redis.ts';
import type { ClaimResult, ReplayStore } from './replay-store.ts';

/** Longest token id accepted; longer ids are refused rather than stored. */
const MAX_JTI_LENGTH = 512;

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
  /** Undefined for an invalid domain: every claim is then refused. */
  readonly #prefix: string | undefined;
  readonly #marker: string;
  readonly #timeoutMs: number;
  readonly #waitReplicas: number;
  readonly #now: () => number;
  #epoch: string | undefined;
  /** When a loss of records was noticed; tokens issued before it cannot be vouched for. */
  #lostAt = Number.NEGATIVE_INFINITY;
  #verified: Promise<boolean> | undefined;

  constructor(options: RedisReplayStoreOptions) {
    this.#client = options.client;
    // No hash tag: ids spread over Cluster slots instead of loading one.
    this.#prefix = isDomain(options.domain) ? `tg:${options.domain}:jti:` : undefined;
    this.#marker = `tg:${options.domain}:jti-epoch`;
    this.#timeoutMs = options.timeoutMs;
    this.#waitReplicas = options.waitReplicas ?? 0;
    this.#now = options.now ?? Date.now;
    // A reconnection may be to a server that restarted empty: check again.
    this.#client.on('ready', () => {
      this.#verified = undefined;
    });
  }

  async claim(jti: string, expiresAtMs: number, issuedAtMs: number): Promise<ClaimResult> {
    if (this.#prefix === undefined || typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) return 'refused';
    const ttl = Math.ceil(expiresAtMs - this.#now());
    if (!(ttl > 0) || !Number.isSafeInteger(ttl)) return 'refused';
    try {
      return await withDeadline(this.#record(this.#prefix + jti, ttl, issuedAtMs), this.#timeoutMs);
    } catch {
      return 'unavailable';
    }
  }

  async #record(key: string, ttl: number, issuedAtMs: number): Promise<ClaimResult> {
    if (!(await this.#trusted())) return 'unavailable';
    if (!(issuedAtMs > this.#lostAt)) return 'unavailable';
    if (this.#waitReplicas === 0) return (await this.#client.set(key, '1', 'PX', ttl, 'NX')) === 'OK' ? 'claimed' : 'refused';
    // One pipeline: in a Cluster both go to the key's master, so WAIT counts its replicas.
    const replies = await this.#client.pipeline().set(key, '1', 'PX', ttl, 'NX').wait(this.#waitReplicas, Math.max(1, Math.floor(this.#timeoutMs / 2))).exec();
    const [set, wait] = replies ?? [];
    if (set === undefined || set[0] !== null) return 'unavailable';
    if (set[1] !== 'OK') return 'refused';
    if (wait !== undefined && wait[0] === null && typeof wait[1] === 'number' && wait[1] >= this.#waitReplicas) return 'claimed';
    // Not safely recorded: forget it, so the caller's retry is a first use again.
    this.#client.del(key).catch(() => {});
    return 'unavailable';
  }

  #trusted(): Promise<boolean> {
    this.#verified ??= this.#checkEpoch().catch(() => {
      this.#verified = undefined;
      return false;
    });
    return this.#verified;
  }

  /** Creates the epoch marker if absent and compares it with the one seen before. */
  async #checkEpoch(): Promise<boolean> {
    const fresh = randomUUID();
    const before = await this.#client.set(this.#marker, fresh, 'NX', 'GET');
    const epoch = before ?? fresh;
    if (this.#epoch !== undefined && epoch !== this.#epoch) this.#lostAt = this.#now();
    this.#epoch = epoch;
    return true;
  }
}
