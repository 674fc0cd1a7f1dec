import { principalDigest } from '../cache/keys.ts';
import { redisCall } from '../cache/breaker.ts';
import type { RedisClient } from '../cache/redis.ts';
import { log } from '../telemetry/log.ts';
import type { Activations } from './activations.ts';

const EMPTY: ReadonlySet<string> = new Set();

/**
 * Activations shared by the replicas of a policy domain: one hash per
 * (revision, principal), tool name → expiry, living as long as its newest
 * activation. When Redis cannot answer, a caller simply sees no activated
 * tools (they stay callable and discoverable); nothing is granted by it.
 * Both are on the request path (discovery, tools/list), so each waits at most
 * the command timeout.
 */
export class RedisActivations implements Activations {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #timeoutMs: number;

  constructor(opts: { client: RedisClient; domain: string; ttlMs: number; timeoutMs: number; now?: () => number }) {
    this.#client = opts.client;
    this.#timeoutMs = opts.timeoutMs;
    this.#prefix = `tg:${opts.domain}:act:`;
    this.#ttlMs = opts.ttlMs;
    this.#now = opts.now ?? Date.now;
  }

  async activate(revision: number, principal: string, names: readonly string[]): Promise<ReadonlySet<string>> {
    if (names.length === 0) return EMPTY;
    const key = this.#key(revision, principal);
    const until = String(this.#now() + this.#ttlMs);
    const fields: string[] = [];
    for (const name of names) fields.push(name, until);
    try {
      const replies = await redisCall(this.#client, this.#timeoutMs, () =>
        this.#client
          .multi()
          .hgetall(key)
          .hset(key, ...fields)
          .pexpire(key, this.#ttlMs)
          .exec(),
      );
      const before = replies?.[0];
      return before !== undefined && before[0] === null ? this.#live(before[1] as Record<string, string>) : EMPTY;
    } catch {
      log.warn('discovery activations not recorded: storage unavailable');
      return EMPTY;
    }
  }

  async active(revision: number, principal: string): Promise<ReadonlySet<string>> {
    try {
      return this.#live(
        await redisCall(this.#client, this.#timeoutMs, () => this.#client.hgetall(this.#key(revision, principal))),
      );
    } catch {
      return EMPTY;
    }
  }

  #live(all: Record<string, string>): ReadonlySet<string> {
    const now = this.#now();
    const live = new Set<string>();
    for (const [name, until] of Object.entries(all)) if (Number(until) > now) live.add(name);
    return live;
  }

  #key(revision: number, principal: string): string {
    return `${this.#prefix}${revision}:${principalDigest(principal)}`;
  }
}
