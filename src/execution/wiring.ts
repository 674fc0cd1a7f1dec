import type { GuardOptions } from '../cache/guarded-write.ts';
import type { Pool } from 'undici';
import type { RedisClient } from '../cache/redis.ts';
import type { Settings } from '../config/settings.ts';
import { UpstreamBreaker } from './breaker.ts';
import { ConcurrencyLimits } from './concurrency.ts';
import { RedisIdempotencyStore } from './idempotency-redis.ts';
import { MemoryIdempotencyStore, type IdempotencyStore } from './idempotency-store.ts';
import { RetryBudget } from './retry-budget.ts';
import type { Upstream } from './run.ts';

export interface Execution {
  readonly upstream: Upstream;
  readonly idempotency: IdempotencyStore;
  readonly concurrency: ConcurrencyLimits;
  readonly maxResultBytes: number;
  /** The deadline of a tool whose policy sets no `timeoutMs` (TOOLGATE_UPSTREAM_TIMEOUT_MS). */
  readonly defaultTimeoutMs: number;
}

/** How allowed calls run: one breaker and one retry budget for the upstream, idempotency records shared when Redis is. */
export function execution(settings: Settings, pool: Pool, shared: { readonly client: RedisClient; readonly guard: GuardOptions } | undefined): Execution {
  const now = () => performance.now();
  return {
    upstream: {
      pool,
      breaker: new UpstreamBreaker({
        consecutiveFailures: settings.breakerConsecutiveFailures,
        failurePercent: settings.breakerFailurePercent,
        windowCalls: settings.breakerWindowCalls,
        openMs: settings.breakerOpenMs,
      }),
      budget: new RetryBudget({ percent: settings.retryBudgetPercent, min: settings.retryBudgetMin, windowMs: settings.retryBudgetWindowMs, now }),
      backoffMs: settings.retryBackoffMs,
    },
    idempotency: shared === undefined
      ? new MemoryIdempotencyStore(settings.idempotencyRetentionMs)
      : new RedisIdempotencyStore({ client: shared.client, domain: settings.policyDomain, retentionMs: settings.idempotencyRetentionMs, guard: shared.guard }),
    concurrency: new ConcurrencyLimits(),
    maxResultBytes: settings.idempotencyMaxResultBytes,
    defaultTimeoutMs: settings.upstreamTimeoutMs,
  };
}
