import type { GuardOptions } from '../cache/guarded-write.ts';
import type { Pool } from 'undici';
import type { RedisClient } from '../cache/redis.ts';
import type { Settings } from '../config/settings.ts';
import { UpstreamBreaker } from './breaker.ts';
import { ConcurrencyLimits } from './concurrency.ts';
import { openIdempotencyJournal } from './idempotency-file.ts';
import { RedisIdempotencyStore } from './idempotency-redis.ts';
import { log } from '../telemetry/log.ts';
import { MemoryIdempotencyStore, type IdempotencyStore } from './idempotency-store.ts';
import { RetryBudget } from './retry-budget.ts';
import { MemoryTaskStore, type TaskStore } from './task-store.ts';
import { RedisTaskStore } from './task-store-redis.ts';
import type { Upstream } from './run.ts';

export interface Execution {
  readonly upstream: Upstream;
  readonly idempotency: IdempotencyStore;
  readonly concurrency: ConcurrencyLimits;
  readonly maxResultBytes: number;
  /** The deadline of a tool whose policy sets no `timeoutMs` (TOOLGATE_UPSTREAM_TIMEOUT_MS). */
  readonly defaultTimeoutMs: number;
  /** Who created each task a call returned: in Redis when replicas share it, else in process. */
  readonly tasks: TaskStore;
}

/** The most task bindings one replica keeps in process; the oldest is forgotten first (and its task refused). */
const MAX_TASKS_IN_PROCESS = 100_000;

/** Task bindings: shared when Redis is, so any replica answers a task's creator. */
export function openTaskStore(
  settings: Pick<Settings, 'policyDomain'>,
  shared: { readonly client: RedisClient; readonly commandTimeoutMs: number } | undefined,
): TaskStore {
  return shared === undefined
    ? new MemoryTaskStore(MAX_TASKS_IN_PROCESS)
    : new RedisTaskStore({ client: shared.client, domain: settings.policyDomain, timeoutMs: shared.commandTimeoutMs });
}

/** How allowed calls run: one breaker and one retry budget for the upstream, idempotency records shared when Redis is. */
/**
 * Where idempotency records live: in Redis when replicas share it; else in the
 * journal file, which survives a restart; else in process, which does not:
 * keyed calls to non_idempotent_write tools are then refused
 * (idempotency_not_durable), and the log says so once at start.
 */
export async function openIdempotency(
  settings: Pick<Settings, 'idempotencyFile' | 'idempotencyRetentionMs' | 'policyDomain'>,
  shared: { readonly client: RedisClient; readonly guard: GuardOptions } | undefined,
): Promise<IdempotencyStore & { close?(): Promise<void> }> {
  if (shared !== undefined)
    return new RedisIdempotencyStore({
      client: shared.client,
      domain: settings.policyDomain,
      retentionMs: settings.idempotencyRetentionMs,
      guard: shared.guard,
    });
  if (settings.idempotencyFile !== undefined)
    return openIdempotencyJournal(settings.idempotencyFile, settings.idempotencyRetentionMs);
  log.warn(
    'idempotency records would live in this process only, which a restart forgets: keyed calls to non_idempotent_write tools are refused (idempotency_not_durable); set TOOLGATE_IDEMPOTENCY_FILE (a volume) or TOOLGATE_REDIS_URL',
    { setting: 'TOOLGATE_IDEMPOTENCY_FILE' },
  );
  return new MemoryIdempotencyStore(settings.idempotencyRetentionMs);
}

const now = () => performance.now();

export function execution(
  settings: Pick<
    Settings,
    | 'breakerConsecutiveFailures'
    | 'breakerFailurePercent'
    | 'breakerOpenMs'
    | 'breakerWindowCalls'
    | 'idempotencyMaxResultBytes'
    | 'retryBackoffMs'
    | 'retryBudgetMin'
    | 'retryBudgetPercent'
    | 'retryBudgetWindowMs'
    | 'upstreamTimeoutMs'
  >,
  pool: Pool,
  idempotency: IdempotencyStore,
  tasks: TaskStore,
): Execution {
  return {
    upstream: {
      pool,
      breaker: new UpstreamBreaker({
        consecutiveFailures: settings.breakerConsecutiveFailures,
        failurePercent: settings.breakerFailurePercent,
        windowCalls: settings.breakerWindowCalls,
        openMs: settings.breakerOpenMs,
      }),
      budget: new RetryBudget({
        percent: settings.retryBudgetPercent,
        min: settings.retryBudgetMin,
        windowMs: settings.retryBudgetWindowMs,
        now,
      }),
      backoffMs: settings.retryBackoffMs,
    },
    idempotency,
    concurrency: new ConcurrencyLimits(),
    maxResultBytes: settings.idempotencyMaxResultBytes,
    defaultTimeoutMs: settings.upstreamTimeoutMs,
    tasks,
  };
}
