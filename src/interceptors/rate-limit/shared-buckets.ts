import { createHash } from 'node:crypto';
import { principalDigest, rateLimitKey } from '../../cache/keys.ts';
import type { RedisClient } from '../../cache/redis.ts';
import { runScript, script } from '../../cache/scripts.ts';
import { rateLimitFallback } from '../../telemetry/channels.ts';
import { log } from '../../telemetry/log.ts';
import type { Admission, BucketLimit, TokenBuckets } from './buckets.ts';

/**
 * The same token buckets as TokenBuckets, in Redis: every limit that applies
 * is read, refilled and (when all admit) taken from in one script, one round
 * trip, on Redis's clock so replicas agree on time. KEYS are one hash per
 * rule and principal; ARGV[1] is 1 to consume, then burst and ms-per-call
 * for each key. Returns 0 when admitted, else the wait in milliseconds.
 */
const TAKE = script(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local wait = 0
local tokens = {}
for i, key in ipairs(KEYS) do
  local burst = tonumber(ARGV[2 * i])
  local per = tonumber(ARGV[2 * i + 1])
  local held = redis.call('HMGET', key, 't', 'a')
  local tk = tonumber(held[1]) or burst
  local at = tonumber(held[2]) or now
  tk = math.min(burst, tk + math.max(0, now - at) / per)
  tokens[i] = tk
  if tk < 1 then wait = math.max(wait, math.ceil((1 - tk) * per)) end
end
if wait > 0 then return wait end
if ARGV[1] == '1' then
  for i, key in ipairs(KEYS) do
    local burst = tonumber(ARGV[2 * i])
    local per = tonumber(ARGV[2 * i + 1])
    redis.call('HSET', key, 't', tostring(tokens[i] - 1), 'a', tostring(now))
    redis.call('PEXPIRE', key, math.ceil(burst * per) + 1000)
  end
end
return 0
`);

export interface SharedBucketsOptions {
  readonly client: RedisClient;
  readonly domain: string;
  /** Used while Redis cannot be asked: per-process limits, as without Redis. */
  readonly fallback: TokenBuckets;
}

/**
 * Rate limits shared by every replica through Redis. Rate limits are not a
 * security boundary (grants are, and they fail closed), so when Redis cannot
 * be asked the decision falls back to this replica's own buckets, counted in
 * a metric and said once in the log per outage.
 */
export class SharedBuckets {
  readonly #client: RedisClient;
  readonly #domain: string;
  readonly #fallback: TokenBuckets;
  readonly #ruleIds = new WeakMap<BucketLimit, string>();
  #degraded = false;

  constructor(options: SharedBucketsOptions) {
    this.#client = options.client;
    this.#domain = options.domain;
    this.#fallback = options.fallback;
  }

  async take(limits: readonly BucketLimit[], subject: string, consume: boolean): Promise<Admission> {
    const who = principalDigest(subject);
    const keys = limits.map((l) => rateLimitKey(this.#domain, this.#ruleId(l), who));
    const args: (string | number)[] = [consume ? '1' : '0'];
    for (const l of limits) args.push(l.burst, l.msPerCall);
    let waitMs: number;
    try {
      waitMs = Number(await runScript(this.#client, TAKE, keys, args));
    } catch (err) {
      if (!this.#degraded) log.warn('shared rate limits unavailable: limits are per replica until Redis answers', { error: (err as { name?: string }).name ?? 'unknown' });
      this.#degraded = true;
      if (rateLimitFallback.hasSubscribers) rateLimitFallback.publish({});
      return this.#fallback.take(limits, subject, consume);
    }
    if (this.#degraded) log.info('shared rate limits restored');
    this.#degraded = false;
    return waitMs > 0 ? { ok: false, retryAfterMs: waitMs } : { ok: true };
  }

  /** A short, stable name for a rule in keys: its identity, digested. */
  #ruleId(limit: BucketLimit): string {
    let id = this.#ruleIds.get(limit);
    if (id === undefined) this.#ruleIds.set(limit, (id = createHash('sha256').update(limit.key).digest('hex').slice(0, 16)));
    return id;
  }
}
