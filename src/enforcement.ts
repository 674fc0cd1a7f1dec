import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';
import type { Pool } from 'undici';
import type { Catalogue } from './catalogue/catalogue.ts';
import { CatalogueSync } from './catalogue/sync.ts';
import { MemoryReplayStore, type ReplayStore } from './auth/replay-store.ts';
import { SessionBindings } from './auth/session-bindings.ts';
import type { RedisClient, RedisConfig } from './cache/redis.ts';
import type { PolicyInForce } from './auth/policy-in-force.ts';
import { policyLoader } from './config/reload/policy-loader.ts';
import { watchPolicy } from './config/reload/watch.ts';
import { toolMetadata, type Policy } from './config/policy/policy.ts';
import { type SideEffect } from './config/policy/raw.ts';
import type { Settings } from './config/settings.ts';
import type { GrpcPolicyDeps } from './grpc/deps.ts';
import { ListChangedStreams } from './discovery/list-changed.ts';
import type { ListChangedRelay } from './discovery/list-changed-redis.ts';
import type { DiscoveryService } from './discovery/service.ts';
import { type GrantStore } from './grants/store.ts';
import { createFileGrantStore, type FileGrantStore } from './grants/file-store.ts';
import { lazyValidatorClients } from './grpc/lazy-validator-clients.ts';
import { createEnforcer, type Enforcer } from './pipeline/policy.ts';
import { argumentsInterceptor } from './interceptors/arguments.ts';
import { grantsInterceptor } from './interceptors/grants.ts';
import { createExternalValidators } from './interceptors/external-validator.ts';
import { rateLimitInterceptor } from './interceptors/rate-limit/interceptor.ts';
import { securityLevelInterceptor } from './interceptors/security-level.ts';
import type { CatalogueView } from './catalogue/view.ts';
import { composeChain } from './pipeline/compose.ts';
import { catalogueState } from './telemetry/channels.ts';
import { grantState } from './telemetry/channels.ts';
import { log } from './telemetry/log.ts';
import { StartupError } from './errors.ts';
import { SchemaCache } from './validation/cache.ts';
import { compileToolSchema, type CompileOptions } from './validation/compile.ts';
import { createSchemaRegistry } from './validation/registry.ts';

/** Largest upstream tools/list response toolgate buffers to filter it. */
const MAX_REWRITE_BYTES = 16 * 1024 * 1024;
/** Session bindings kept per sidecar (the README's TOOLGATE_SESSION_IDLE_MS row says so). */
const MAX_SESSIONS = 100_000;

export interface RunningEnforcement {
  readonly enforcer: Enforcer;
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
 * Wiring for policy mode: the policy and its verifiers, the upstream
 * catalogue, and the interceptor chain (order matters: who may call, with
 * what credential, with which arguments). Redis and the discovery engine are
 * imported only when configured.
 */
export async function startEnforcement(settings: Settings, pool: Pool): Promise<RunningEnforcement> {
  const path = settings.policyFile as string;
  const shared = settings.redisUrl === undefined ? undefined : await connectRedis(settings);
  // One replay store for every policy version: a one-time token spent before
  // a reload stays spent after it.
  const replayStore = shared?.replayStore ?? new MemoryReplayStore();
  let fileGrants: FileGrantStore | undefined;
  let current: PolicyInForce;
  // External validators last in the chain: they see only calls toolgate itself would forward.
  const callers = lazyValidatorClients();
  const validators = createExternalValidators(callers);
  const watcher = watchPolicy({
    path,
    load: policyLoader({ replayStore }),
    // Synchronous, so a request sees the new grants and the new metadata, or neither.
    onApply: ({ value }) => {
      if (fileGrants !== undefined && fileGrants.replaceRows(value.policy.grants) === undefined) throw new Error('grant rows refused');
      current = value;
      if (value.policy.validators.length > 0) callers.load().catch((err: unknown) => log.error('cannot load the gRPC client for external validators', { error: (err as Error).message }));
    },
  });
  const first = await watcher.start();
  if (!first.ok) {
    shared?.close();
    const e = first.errors[0];
    throw new StartupError(`invalid policy ${path}: ${e?.path || '/'}: ${e?.message ?? 'invalid'}${first.errors.length > 1 ? ` (and ${first.errors.length - 1} more)` : ''}`);
  }
  current = first.value;
  if (current.policy.validators.length > 0) await callers.load();
  const grants = await openGrantStore(settings, current.policy, shared).catch(async (err: unknown) => {
    await watcher.close();
    throw err;
  });
  if (settings.grantSource === 'file') fileGrants = grants as FileGrantStore;
  const schemas = schemaCaches();
  const sync = new CatalogueSync({
    url: new URL(settings.mcpPath, settings.upstream),
    refreshIntervalMs: settings.catalogueRefreshMs,
    onChange: (c) => {
      void reportEnforceability(c, schemas(current.policy).registry, () => sync.current() === c);
    },
  });
  const catalogue: CatalogueView = {
    current: () => sync.current(),
    get: (name) => sync.current()?.tools.get(name),
    names: () => sync.current()?.tools.keys() ?? [],
    refresh: async () => {
      await sync.refresh();
    },
  };
  const rateLimit = rateLimitInterceptor();
  const interceptors = [grantsInterceptor(), securityLevelInterceptor(), rateLimit, argumentsInterceptor(schemas), validators.interceptor];
  const chain = composeChain(interceptors);
  // Discovery is answered by toolgate, not forwarded: of the chain only the rate limits apply to it.
  const discoveryChain = composeChain([rateLimit]);
  const listChanged = new ListChangedStreams();
  // What each caller may see was decided under the old grants: every open stream is told to list again.
  grants.onRevision(() => listChanged.notifyAll());
  let relay: ListChangedRelay | undefined;
  let discovery: DiscoveryService | undefined;
  if (settings.deferredTools) {
    const [{ ACTIVATION_TTL_MS, createDiscovery }, { RedisActivations }, { ListChangedRelay: Relay }] = await Promise.all([
      import('./discovery/service.ts'), import('./discovery/activations-redis.ts'), import('./discovery/list-changed-redis.ts'),
    ]);
    const activations = shared === undefined ? undefined : new RedisActivations({ client: shared.client, domain: settings.policyDomain, ttlMs: ACTIVATION_TTL_MS });
    relay = shared === undefined ? undefined : new Relay({ config: shared.config, publisher: shared.client, domain: settings.policyDomain, streams: listChanged });
    discovery = createDiscovery({ catalogue, revisionNow: () => grants.revision() ?? -1, activations, listChanged, relay });
  }
  const sessions = new SessionBindings({ idleMs: settings.sessionIdleMs, maxEntries: MAX_SESSIONS });
  const enforcer = createEnforcer({ current: () => current, catalogue, chain, discoveryChain, grants, pool, maxRewriteBytes: MAX_REWRITE_BYTES, discovery, listChanged, sessions });
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
    enforcer,
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

interface SharedRedis {
  readonly config: RedisConfig;
  readonly client: RedisClient;
  readonly replayStore: ReplayStore;
  close(): void;
}

/** One connection for one-time-token records and discovery activations; the grant store opens its own. */
async function connectRedis(settings: Settings): Promise<SharedRedis> {
  const [{ createRedisClient, parseRedisConfig }, { RedisReplayStore }] = await Promise.all([
    import('./cache/redis.ts'), import('./auth/redis-replay-store.ts'),
  ]);
  const parsed = parseRedisConfig({
    url: settings.redisUrl as string,
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

/**
 * Grants come from the policy file (in process, a stable random revision per
 * process) or from Redis, shared by every replica of the policy domain.
 */
async function openGrantStore(settings: Settings, policy: Policy, shared: SharedRedis | undefined): Promise<GrantStore> {
  if (settings.grantSource === 'file') {
    return createFileGrantStore({ rows: policy.grants, l1MaxEntries: settings.grantsL1MaxEntries });
  }
  if (policy.grants.length > 0) log.warn('grant rows in the policy file are ignored: grants come from Redis', { setting: 'TOOLGATE_GRANT_SOURCE' });
  const { createRedisGrantStore } = await import('./grants/redis-store.ts');
  const opened = await createRedisGrantStore({
    redis: (shared as SharedRedis).config,
    domain: settings.policyDomain,
    stalenessMs: settings.grantsStalenessMs,
    checkIntervalMs: Math.min(settings.grantsCheckIntervalMs, settings.grantsStalenessMs),
    l1MaxEntries: settings.grantsL1MaxEntries,
    l2TtlSeconds: settings.grantsL2TtlSeconds,
  });
  if (!opened.ok) {
    shared?.close();
    throw new StartupError(`invalid grant store settings: ${opened.problem}`);
  }
  return opened.store;
}

/**
 * One validator cache per set of registered schemas: a validator compiled
 * against one registry must never serve another. Policies without registered
 * schemas share one cache, so a reload does not recompile every tool.
 */
function schemaCaches(): (policy: Policy) => SchemaCache {
  const plain = new SchemaCache();
  const byPolicy = new WeakMap<Policy, SchemaCache>();
  return (policy) => {
    if (Object.keys(policy.schemas).length === 0) return plain;
    let cache = byPolicy.get(policy);
    if (cache === undefined) {
      const registry = createSchemaRegistry(policy.schemas);
      // Policy loading already refused registries that cannot be built.
      cache = registry.ok ? new SchemaCache(4096, { registry: registry.registry }) : plain;
      byPolicy.set(policy, cache);
    }
    return cache;
  };
}

/** Longest stretch the background schema check runs before it lets requests in. */
const CHECK_SLICE_MS = 5;

/**
 * Names, in one log line and a gauge, the tools whose calls will be refused
 * because their schema cannot be enforced. It runs in the background, a few
 * milliseconds at a time, and gives up when a newer catalogue arrives, so a
 * catalogue of thousands of tools neither delays readiness nor stalls
 * requests. What it compiles is not kept: calls compile (and cache) the
 * schemas of the tools actually called, so memory grows with what is used,
 * not with the size of the catalogue.
 */
async function reportEnforceability(c: Catalogue, registry: CompileOptions['registry'], current: () => boolean): Promise<void> {
  const refused: string[] = [];
  let sliceStart = performance.now();
  for (const t of c.tools.values()) {
    if (performance.now() - sliceStart > CHECK_SLICE_MS) {
      await setImmediate();
      if (!current()) return;
      sliceStart = performance.now();
    }
    const compiled = compileToolSchema(t.tool.inputSchema, { registry });
    if (!compiled.ok) refused.push(`${t.name}:${compiled.reason}`);
  }
  if (refused.length > 0) log.warn('tools with unenforceable input schemas; their calls are refused', { count: refused.length, tools: refused.join(',') });
  if (catalogueState.hasSubscribers) catalogueState.publish({ tools: c.tools.size, unenforceable: refused.length });
}
