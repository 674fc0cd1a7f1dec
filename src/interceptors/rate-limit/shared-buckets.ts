import { createHash, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { principalDigest, rateLimitKey, rateLimitReplicasKey } from '../../cache/keys.ts';
import type { RedisClient } from '../../cache/redis.ts';
import { runScript, script } from '../../cache/scripts.ts';
import { rateLimitFallback } from '../../telemetry/channels.ts';
import { log } from '../../telemetry/log.ts';
import type { Admission, BucketLimit, TokenBuckets } from './buckets.ts';

/**
 * The same token buckets as TokenBuckets, in Redis: every limit that applies
 * is read, refilled and (when all admit) taken from in one script, one round
 * trip, on Redis's clock so replicas agree on time. KEYS are one hash per
 * rule and principal, then the domain's set of replicas seen; ARGV[1] is 1 to
 * consume, then burst and ms-per-call for each hash, then this replica's id.
 * Returns {wait in ms (0 when admitted), replicas seen in the last minute}.
 */
const TAKE = script(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local seen = KEYS[#KEYS]
redis.call('ZADD', seen, now, ARGV[#ARGV])
redis.call('ZREMRANGEBYSCORE', seen, '-inf', now - 60000)
redis.call('PEXPIRE', seen, 120000)
local replicas = redis.call('ZCARD', seen)
local wait = 0
local tokens = {}
for i = 1, #KEYS - 1 do
  local key = KEYS[i]
  local burst = tonumber(ARGV[2 * i])
  local per = tonumber(ARGV[2 * i + 1])
  local held = redis.call('HMGET', key, 't', 'a')
  local tk = tonumber(held[1]) or burst
  local at = tonumber(held[2]) or now
  tk = math.min(burst, tk + math.max(0, now - at) / per)
  tokens[i] = tk
  if tk < 1 then wait = math.max(wait, math.ceil((1 - tk) * per)) end
end
if wait == 0 and ARGV[1] == '1' then
  for i = 1, #KEYS - 1 do
    local burst = tonumber(ARGV[2 * i])
    local per = tonumber(ARGV[2 * i + 1])
    redis.call('HSET', KEYS[i], 't', tostring(tokens[i] - 1), 'a', tostring(now))
    redis.call('PEXPIRE', KEYS[i], math.ceil(burst * per) + 1000)
  end
end
return {wait, replicas}
`);

/** While Redis is known to be down, it is asked again once per this long; meanwhile calls are decided at once. */
const PROBE_MS = 1000;

export interface SharedBucketsOptions {
  readonly client: RedisClient;
  readonly domain: string;
  /** Used while Redis cannot be asked: this replica's share of each limit. */
  readonly fallback: TokenBuckets;
  /** Monotonic milliseconds. */
  readonly now?: () => number;
}

/**
 * Rate limits shared by every replica through Redis. Rate limits are not a
 * security boundary (grants are, and they fail closed), so when Redis cannot
 * be asked the decision falls back to this replica's own buckets, counted in
 * a metric and said once in the log per outage. Bounded all the same:
 * - the fallback takes the rule divided by the replicas the domain last saw
 *   (active in the last minute), so the replicas together stay near the rule,
 *   and that share is charged for every call Redis admitted, so an outage
 *   starts from what this replica used lately, not from a full burst;
 * - once Redis is known to be down, it is asked once a second, not on every
 *   call, so calls do not each wait out the command timeout;
 * - for one refill period after Redis answers again, a call must also pass
 *   this replica's share: a Redis restarted empty has full buckets, and would
 *   otherwise grant a fresh burst on top of what the outage allowed.
 */
export class SharedBuckets {
  readonly #client: RedisClient;
  readonly #domain: string;
  readonly #fallback: TokenBuckets;
  readonly #now: () => number;
  readonly #replicaId = randomUUID();
  readonly #ruleIds = new WeakMap<BucketLimit, string>();
  readonly #shares = new WeakMap<BucketLimit, { readonly replicas: number; readonly limit: BucketLimit }>();
  #degraded = false;
  #replicas = 1;
  /** Redis is not asked before this moment (it failed); the first call after it probes. */
  #askAfter = Number.NEGATIVE_INFINITY;
  /** When Redis last answered after an outage. */
  #restoredAt = Number.NEGATIVE_INFINITY;

  constructor(options: SharedBucketsOptions) {
    this.#client = options.client;
    this.#domain = options.domain;
    this.#fallback = options.fallback;
    this.#now = options.now ?? (() => performance.now());
  }

  async take(limits: readonly BucketLimit[], subject: string, consume: boolean): Promise<Admission> {
    const now = this.#now();
    if (now < this.#askAfter) return this.#alone(limits, subject, consume);
    const afterOutage = limits.some((l) => now < this.#restoredAt + l.burst * l.msPerCall);
    if (afterOutage) {
      const share = this.#share(limits, subject, false);
      if (!share.ok) return share;
    }
    const who = principalDigest(subject);
    const keys = [
      ...limits.map((l) => rateLimitKey(this.#domain, this.#ruleId(l), who)),
      rateLimitReplicasKey(this.#domain),
    ];
    const args: (string | number)[] = [consume ? '1' : '0'];
    for (const l of limits) args.push(l.burst, l.msPerCall);
    args.push(this.#replicaId);
    // Half-open: calls arriving while this one asks are decided alone.
    if (this.#degraded) this.#askAfter = now + PROBE_MS;
    let reply: [number, number];
    try {
      reply = (await runScript(this.#client, TAKE, keys, args)) as [number, number];
    } catch (err) {
      if (!this.#degraded)
        log.warn('shared rate limits unavailable: limits are per replica until Redis answers', {
          error: (err as { name?: string }).name ?? 'unknown',
          replicas: this.#replicas,
        });
      this.#degraded = true;
      this.#askAfter = this.#now() + PROBE_MS;
      return this.#alone(limits, subject, consume);
    }
    if (this.#degraded) {
      log.info('shared rate limits restored');
      this.#restoredAt = this.#now();
      this.#askAfter = Number.NEGATIVE_INFINITY;
    }
    this.#degraded = false;
    const [waitMs, replicas] = reply.map(Number) as [number, number];
    if (Number.isSafeInteger(replicas) && replicas > 0) this.#replicas = replicas;
    if (waitMs > 0) return { ok: false, retryAfterMs: waitMs };
    // This replica's share keeps count of what it was granted, so an outage starts from its recent use, not a full burst.
    if (consume) this.#share(limits, subject, true);
    return { ok: true };
  }

  /** Decided by this replica alone, on its share of each limit. */
  #alone(limits: readonly BucketLimit[], subject: string, consume: boolean): Admission {
    if (rateLimitFallback.hasSubscribers) rateLimitFallback.publish({});
    return this.#share(limits, subject, consume);
  }

  #share(limits: readonly BucketLimit[], subject: string, consume: boolean): Admission {
    return this.#fallback.take(
      limits.map((l) => this.#shareOf(l)),
      subject,
      consume,
    );
  }

  /** One limit divided among the replicas last seen: a smaller burst, a slower refill. */
  #shareOf(limit: BucketLimit): BucketLimit {
    const n = this.#replicas;
    const known = this.#shares.get(limit);
    if (known !== undefined && known.replicas === n) return known.limit;
    const share =
      n === 1
        ? limit
        : {
            key: `${limit.key}\u0000share/${n}`,
            burst: Math.max(1, Math.floor(limit.burst / n)),
            msPerCall: limit.msPerCall * n,
          };
    this.#shares.set(limit, { replicas: n, limit: share });
    return share;
  }

  /** A short, stable name for a rule in keys: its identity, digested. */
  #ruleId(limit: BucketLimit): string {
    let id = this.#ruleIds.get(limit);
    if (id === undefined)
      this.#ruleIds.set(limit, (id = createHash('sha256').update(limit.key).digest('hex').slice(0, 16)));
    return id;
  }
}
