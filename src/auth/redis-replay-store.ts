/**
 * One-time token ids recorded in Redis, so a token used on one replica is
 * refused on all of them. `SET … NX PX` records the id and tells a first use
 * from a replay in one step, and the key expires with the token. Redis being
 * unreachable or slow counts as "cannot record": the claim is refused.
 */
import { isDomain } from '../cache/keys.ts';
import type { RedisClient } from '../cache/redis.ts';
import type { ReplayStore } from './replay-store.ts';

/** Longest token id accepted; longer ids are refused rather than stored. */
const MAX_JTI_LENGTH = 512;

export interface RedisReplayStoreOptions {
  readonly client: RedisClient;
  /** Policy domain: replicas sharing one-time tokens. */
  readonly domain: string;
  readonly now?: () => number;
}

export class RedisReplayStore implements ReplayStore {
  readonly #client: RedisClient;
  /** Undefined for an invalid domain: every claim is then refused. */
  readonly #prefix: string | undefined;
  readonly #now: () => number;

  constructor(options: RedisReplayStoreOptions) {
    this.#client = options.client;
    // No hash tag: ids spread over Cluster slots instead of loading one.
    this.#prefix = isDomain(options.domain) ? `tg:${options.domain}:jti:` : undefined;
    this.#now = options.now ?? Date.now;
  }

  async claim(jti: string, expiresAtMs: number): Promise<boolean> {
    if (this.#prefix === undefined || typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) return false;
    const ttl = Math.ceil(expiresAtMs - this.#now());
    if (!(ttl > 0) || !Number.isSafeInteger(ttl)) return false;
    try {
      return (await this.#client.set(this.#prefix + jti, '1', 'PX', ttl, 'NX')) === 'OK';
    } catch {
      return false;
    }
  }
}
