/**
 * All wiring, and nothing else: settings → upstream pool → policy (policy in
 * force, grant store, catalogue, interceptor chain, discovery) → request path
 * → servers; and the reverse on SIGTERM, with a drain.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'undici';
import type { PolicyInForce } from './auth/policy-in-force.ts';
import { RedisReplayStore } from './auth/redis-replay-store.ts';
import { MemoryReplayStore, type ReplayStore } from './auth/replay-store.ts';
import { SessionBindings } from './auth/session-bindings.ts';
import { createRedisClient, parseRedisConfig, type RedisClient, type RedisConfig } from './cache/redis.ts';
import { reportEnforceability } from './catalogue/enforceability.ts';
import { CatalogueSync } from './catalogue/sync.ts';
import type { CatalogueView } from './catalogue/view.ts';
import { toolMetadata } from './config/policy/policy.ts';
import type { SideEffect } from './config/policy/raw.ts';
import { policyLoader } from './config/reload/policy-loader.ts';
import { watchPolicy } from './config/reload/watch.ts';
import type { Settings } from './config/settings.ts';
import { RedisActivations } from './discovery/activations-redis.ts';
import { ListChangedStreams } from './discovery/list-changed.ts';
import { ListChangedRelay } from './discovery/list-changed-redis.ts';
import { ACTIVATION_TTL_MS, createDiscovery } from './discovery/service.ts';
import { StartupError } from './errors.ts';
import type { FileGrantStore } from './grants/file-store.ts';
import { openGrantStore } from './grants/open-store.ts';
import type { GrpcPolicyDeps } from './grpc/deps.ts';
import { startGrpcServer, type RunningGrpc } from './grpc/server.ts';
import { ValidatorClients } from './grpc/validator-client.ts';
import { createAdminServer } from './http/admin.ts';
import { installClientErrorHandler } from './http/client-error.ts';
import { createTrafficHandler } from './http/handler.ts';
import { closeServer, drain, listen } from './http/lifecycle.ts';
import { argumentsInterceptor } from './interceptors/arguments.ts';
import { createExternalValidators } from './interceptors/external-validator.ts';
import { grantsInterceptor } from './interceptors/grants.ts';
import { rateLimitInterceptor } from './interceptors/rate-limit/interceptor.ts';
import { TokenBuckets } from './interceptors/rate-limit/buckets.ts';
import { SharedBuckets } from './interceptors/rate-limit/shared-buckets.ts';
import { idempotencyInterceptor } from './interceptors/idempotency.ts';
import { UpstreamBreaker } from './execution/breaker.ts';
import { ConcurrencyLimits } from './execution/concurrency.ts';
import { RedisIdempotencyStore } from './execution/idempotency-redis.ts';
import { MemoryIdempotencyStore } from './execution/idempotency-store.ts';
import { RetryBudget } from './execution/retry-budget.ts';
import type { ExecuteDeps } from './pipeline/stages/execute.ts';
import { performance } from 'node:perf_hooks';
import { securityLevelInterceptor } from './interceptors/security-level.ts';
import { composeChain } from './pipeline/compose.ts';
import { policyPath } from './pipeline/policy.ts';
import type { RequestPath } from './pipeline/request-path.ts';
import { transparentPath } from './pipeline/transparent.ts';
import { grantState } from './telemetry/channels.ts';
import { log, setLogLevel } from './telemetry/log.ts';
import { createMetrics } from './telemetry/metrics.ts';
import { startTelemetry } from './telemetry/start.ts';
import { createUpstreamPool } from './upstream/pool.ts';
import { waitForUpstream } from './upstream/probe.ts';
import { schemaCaches } from './validation/schema-caches.ts';

/** Largest upstream tools/list response toolgate buffers to filter it. */
const MAX_REWRITE_BYTES = 16 * 1024 * 1024;
/** Session bindings kept per sidecar (the README's TOOLGATE_SESSION_IDLE_MS row says so). */
const MAX_SESSIONS = 100_000;

export interface Toolgate {
  readonly port: number;
  readonly adminPort: number;
  /** The gRPC API port, when TOOLGATE_GRPC is on. */
  readonly grpcPort: number | undefined;
  /** Resolves once the upstream has answered (the readiness condition). */
  readonly ready: Promise<void>;
  /**
   * Stops accepting, lets in-flight requests and open streams finish for up
   * to `drainTimeoutMs`, then closes whatever is left.
   */
  close(): Promise<void>;
}

export async function start(settings: Settings): Promise<Toolgate> {
  setLogLevel(settings.logLevel);
  for (const warning of settings.warnings) log.warn(warning);
  const metrics = createMetrics();
  const pool = createUpstreamPool(settings);
  const lifetime = new AbortController();
  let upstreamAnswered = false;
  let draining = false;
  let policy: RunningPolicy | undefined;
  if (settings.policyFile !== undefined) {
    policy = await startPolicy(settings, settings.policyFile, pool).catch(async (err: unknown) => {
      await pool.close();
      metrics.dispose();
      throw err;
    });
  } else {
    log.warn('no policy file configured: every request is forwarded unchecked', { setting: 'TOOLGATE_POLICY_FILE' });
    if (settings.deferredTools) log.warn('deferred tool listing needs a policy; it is off', { setting: 'TOOLGATE_DEFERRED_TOOLS' });
  }

  const telemetry = await startTelemetry(settings, { sideEffect: (tool) => policy?.sideEffect(tool) });
  const path: RequestPath = policy?.path ?? transparentPath(settings, pool);
  const traffic = createServer({ maxHeaderSize: settings.maxHeaderBytes, requireHostHeader: false }, createTrafficHandler(settings, path));
  // One more than the limit, so the handler can tell "at the limit" from
  // "over it" (Node silently drops fields past maxHeadersCount).
  traffic.maxHeadersCount = settings.maxHeaders + 1;
  installClientErrorHandler(traffic);

  const reasons = () => {
    const out: string[] = [];
    if (draining) out.push('draining');
    if (!upstreamAnswered) out.push('upstream_not_answered');
    if (policy !== undefined && !policy.synced()) out.push('catalogue_not_synced');
    return out;
  };
  const admin = createAdminServer(metrics.registry, { reasons });

  await Promise.all([listen(traffic, settings.host, settings.port), listen(admin, settings.host, settings.adminPort)]);
  let grpc: RunningGrpc | undefined;
  if (settings.grpcEnabled) {
    grpc = await startGrpcServer({ settings, notReadyReasons: reasons, policy: policy?.grpc }).catch(async (err: unknown) => {
      await Promise.all([closeServer(traffic), closeServer(admin), pool.close(), policy?.close(), telemetry.close()]);
      metrics.dispose();
      throw err;
    });
  }
  const port = (traffic.address() as AddressInfo).port;
  const adminPort = (admin.address() as AddressInfo).port;
  log.info('listening', { port, adminPort, grpcPort: grpc?.port, upstream: settings.upstream.origin, mcpPath: settings.mcpPath });

  const answered = waitForUpstream(pool, settings.mcpPath, lifetime.signal).then(() => {
    if (!lifetime.signal.aborted) upstreamAnswered = true;
  });
  const ready = Promise.all([answered, policy?.firstSync]).then(() => {
    if (!lifetime.signal.aborted) log.info('ready');
  });

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      draining = true;
      lifetime.abort();
      await Promise.all([drain(traffic, settings.drainTimeoutMs), grpc?.close(settings.drainTimeoutMs)]);
      await Promise.all([pool.close(), closeServer(admin), policy?.close()]);
      metrics.dispose();
      await telemetry.close();
      log.info('stopped');
    })();
    return closing;
  };
  return { port, adminPort, grpcPort: grpc?.port, ready, close };
}

interface RunningPolicy {
  readonly path: RequestPath;
  /** The side effect the policy in force declares for a tool (audit records writes). */
  sideEffect(tool: string): SideEffect;
  /** Resolves once toolgate has its first copy of the upstream's catalogue. */
  readonly firstSync: Promise<void>;
  /** What the gRPC API's policy services read: the same policy, grants, catalogue and interceptors. */
  readonly grpc: GrpcPolicyDeps;
  synced(): boolean;
  close(): Promise<void>;
}

/**
 * Policy mode: the policy in force (hot-reloaded), the grant store, the
 * upstream catalogue, and the interceptor chain. Order matters: who may call,
 * with what credential, how often, with which arguments; external
 * validators last, so they see only calls toolgate itself would forward.
 */
async function startPolicy(settings: Settings, file: string, pool: Pool): Promise<RunningPolicy> {
  const shared = settings.redisUrl === undefined ? undefined : connectRedis(settings, settings.redisUrl);
  // One replay store for every policy version: a one-time token spent before
  // a reload stays spent after it.
  const replayStore = shared?.replayStore ?? new MemoryReplayStore();
  let fileGrants: FileGrantStore | undefined;
  let current: PolicyInForce;
  const watcher = watchPolicy({
    path: file,
    load: policyLoader({ replayStore }),
    // Synchronous, so a request sees the new grants and the new metadata, or neither.
    onApply: ({ value }) => {
      if (fileGrants !== undefined && fileGrants.replaceRows(value.policy.grants) === undefined) throw new Error('grant rows refused');
      current = value;
    },
  });
  const first = await watcher.start();
  if (!first.ok) {
    shared?.close();
    const e = first.errors[0];
    throw new StartupError(`invalid policy ${file}: ${e?.path || '/'}: ${e?.message ?? 'invalid'}${first.errors.length > 1 ? ` (and ${first.errors.length - 1} more)` : ''}`);
  }
  current = first.value;
  const opened = await openGrantStore(settings, current.policy, shared?.config).catch(async (err: unknown) => {
    shared?.close();
    await watcher.close();
    throw err;
  });
  const grants = opened.store;
  if (opened.source === 'file') fileGrants = opened.store;
  const schemas = schemaCaches();
  const sync = new CatalogueSync({
    url: new URL(settings.mcpPath, settings.upstream),
    refreshIntervalMs: settings.catalogueRefreshMs,
    onChange: (c) => reportEnforceability(c, schemas(current.policy)),
  });
  const catalogue: CatalogueView = {
    current: () => sync.current(),
    get: (name) => sync.current()?.tools.get(name),
    names: () => sync.current()?.tools.keys() ?? [],
    refresh: async () => {
      await sync.refresh();
    },
  };
  const validators = createExternalValidators(new ValidatorClients());
  const local = new TokenBuckets(() => performance.now());
  const rateLimit = rateLimitInterceptor(shared === undefined ? local : new SharedBuckets({ client: shared.client, domain: settings.policyDomain, fallback: local }));
  const interceptors = [grantsInterceptor(), securityLevelInterceptor(), idempotencyInterceptor(), rateLimit, argumentsInterceptor(schemas), validators.interceptor];
  const listChanged = new ListChangedStreams();
  // What each caller may see was decided under the old grants: every open stream is told to list again.
  grants.onRevision(() => listChanged.notifyAll());
  const activations = shared === undefined ? undefined : new RedisActivations({ client: shared.client, domain: settings.policyDomain, ttlMs: ACTIVATION_TTL_MS });
  const relay = shared !== undefined && settings.deferredTools ? new ListChangedRelay({ config: shared.config, publisher: shared.client, domain: settings.policyDomain, streams: listChanged }) : undefined;
  const discovery = settings.deferredTools ? createDiscovery({ catalogue, revisionNow: () => grants.revision() ?? -1, activations, listChanged, relay }) : undefined;
  const path = policyPath({
    settings,
    pool,
    current: () => current,
    catalogue,
    chain: composeChain(interceptors),
    // Discovery is answered by toolgate, not forwarded: of the chain only the rate limits apply to it.
    discoveryChain: composeChain([rateLimit]),
    grants,
    sessions: new SessionBindings({ idleMs: settings.sessionIdleMs, maxEntries: MAX_SESSIONS }),
    maxRewriteBytes: MAX_REWRITE_BYTES,
    discovery,
    listChanged,
    execution: execution(settings, pool, shared?.client),
  });
  let isSynced = false;
  const firstSync = sync.start().then(() => {
    isSynced = true;
    log.info('catalogue synced', { tools: sync.current()?.tools.size ?? 0 });
  });
  firstSync.catch(() => {});
  // Freshness for the revision gauges: published while the store trusts its
  // revision, so the exported age grows as soon as it cannot confirm one.
  const freshness = setInterval(() => {
    const revision = grants.revision();
    if (revision !== undefined && grantState.hasSubscribers) grantState.publish({ revision, confirmedAtMs: Date.now() });
  }, 1000);
  freshness.unref();
  return {
    path,
    grpc: { current: () => current, grants, catalogue, interceptors },
    sideEffect: (tool) => toolMetadata(current.policy, tool).sideEffect,
    firstSync,
    synced: () => isSynced,
    close: async () => {
      clearInterval(freshness);
      validators.close();
      await Promise.all([watcher.close(), sync.close(), grants.close()]);
      relay?.close();
      shared?.close();
    },
  };
}

/** How allowed calls run: one breaker and one retry budget for the upstream, idempotency records shared when Redis is. */
function execution(settings: Settings, pool: Pool, redis: RedisClient | undefined): ExecuteDeps {
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
    idempotency: redis === undefined
      ? new MemoryIdempotencyStore(settings.idempotencyRetentionMs)
      : new RedisIdempotencyStore({ client: redis, domain: settings.policyDomain, retentionMs: settings.idempotencyRetentionMs }),
    concurrency: new ConcurrencyLimits(),
    maxResultBytes: settings.idempotencyMaxResultBytes,
  };
}

interface SharedRedis {
  readonly config: RedisConfig;
  readonly client: RedisClient;
  readonly replayStore: ReplayStore;
  close(): void;
}

/** One connection for one-time-token records and discovery activations; the grant store opens its own. */
function connectRedis(settings: Settings, url: string): SharedRedis {
  const parsed = parseRedisConfig({
    url,
    username: settings.redisUsername,
    passwordFile: settings.redisPasswordFile,
    tlsCaFile: settings.redisTlsCaFile,
    connectTimeoutMs: settings.redisConnectTimeoutMs,
    commandTimeoutMs: settings.redisCommandTimeoutMs,
  });
  if (!parsed.ok) throw new StartupError(`invalid setting ${parsed.setting}: ${parsed.problem}`);
  const client = createRedisClient(parsed.config, { name: 'toolgate-shared' });
  return {
    config: parsed.config,
    client,
    replayStore: new RedisReplayStore({ client, domain: settings.policyDomain }),
    close: () => client.disconnect(),
  };
}
