import type { Pool } from 'undici';
import type { Catalogue } from './catalogue/catalogue.ts';
import { CatalogueSync } from './catalogue/sync.ts';
import { RedisReplayStore } from './auth/redis-replay-store.ts';
import { MemoryReplayStore, type ReplayStore } from './auth/replay-store.ts';
import { SessionBindings } from './auth/session-bindings.ts';
import { createRedisClient, parseRedisConfig, type RedisClient, type RedisConfig } from './cache/redis.ts';
import type { Enforcement } from './config/enforcement.ts';
import { enforcementLoader } from './config/reload/enforcement-loader.ts';
import { watchPolicy } from './config/watch.ts';
import { toolMetadata, type Policy, type SideEffect } from './config/policy.ts';
import type { Settings } from './config/settings.ts';
import type { GrpcPolicyDeps } from './grpc/deps.ts';
import { RedisActivations } from './discovery/activations-redis.ts';
import { ListChangedStreams } from './discovery/list-changed.ts';
import { ListChangedRelay } from './discovery/list-changed-redis.ts';
import { ACTIVATION_TTL_MS, createDiscovery } from './discovery/service.ts';
import { createFileGrantStore, createRedisGrantStore, type FileGrantStore, type GrantStore } from './grants/store.ts';
import { createEnforcer, type Enforcer } from './http/enforce.ts';
import { createExternalValidators } from './interceptors/external-validator.ts';
import type { CatalogueView } from './pipeline/catalogue-view.ts';
import { composeChain } from './pipeline/compose.ts';
import { policyChecks, schemaCaches } from './pipeline/policy-interceptors.ts';
import { catalogueState } from './telemetry/channels.ts';
import { grantState } from './telemetry/hooks.ts';
import { log } from './telemetry/log.ts';
import type { SchemaCache } from './validation/cache.ts';

/** Largest upstream tools/list response toolgate buffers to filter it. */
const MAX_REWRITE_BYTES = 16 * 1024 * 1024;
/** Session bindings kept per sidecar (the README's TOOLGATE_SESSION_IDLE_MS row says so). */
const MAX_SESSIONS = 100_000;

export class StartupError extends Error {
  override readonly name = 'StartupError';
}

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
 * what credential, with which arguments).
 */
export async function startEnforcement(settings: Settings, pool: Pool): Promise<RunningEnforcement> {
  const path = settings.policyFile as string;
  const shared = settings.redisUrl === undefined ? undefined : connectRedis(settings);
  // One replay store for every policy version: a one-time token spent before
  // a reload stays spent after it.
  const replayStore = shared?.replayStore ?? new MemoryReplayStore();
  let fileGrants: FileGrantStore | undefined;
  let current: Enforcement;
  const watcher = watchPolicy({
    path,
    load: enforcementLoader({ replayStore }),
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
    throw new StartupError(`invalid policy ${path}: ${e?.path || '/'}: ${e?.message ?? 'invalid'}${first.errors.length > 1 ? ` (and ${first.errors.length - 1} more)` : ''}`);
  }
  current = first.value;
  const grants = await openGrantStore(settings, current.policy, shared).catch(async (err: unknown) => {
    await watcher.close();
    throw err;
  });
  if (settings.grantSource === 'file') fileGrants = grants as FileGrantStore;
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
  // External validators last: they see only calls toolgate itself would forward.
  const validators = createExternalValidators();
  const { checks, rateLimit } = policyChecks(schemas);
  const interceptors = [...checks, validators.interceptor];
  const chain = composeChain(interceptors);
  // Discovery is answered by toolgate, not forwarded: of the chain only the rate limits apply to it.
  const discoveryChain = composeChain([rateLimit]);
  const activations = shared === undefined ? undefined : new RedisActivations({ client: shared.client, domain: settings.policyDomain, ttlMs: ACTIVATION_TTL_MS });
  const listChanged = new ListChangedStreams();
  // What each caller may see was decided under the old grants: every open stream is told to list again.
  grants.onRevision(() => listChanged.notifyAll());
  const relay = shared !== undefined && settings.deferredTools ? new ListChangedRelay({ config: shared.config, publisher: shared.client, domain: settings.policyDomain, streams: listChanged }) : undefined;
  const discovery = settings.deferredTools ? createDiscovery({ catalogue, revisionNow: () => grants.revision() ?? -1, activations, listChanged, relay }) : undefined;
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
function connectRedis(settings: Settings): SharedRedis {
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
 * Compiles every schema as soon as a catalogue arrives (warming the cache
 * the calls use) and names, in one log line, the tools whose calls will be
 * refused because their schema cannot be enforced.
 */
function reportEnforceability(c: Catalogue, schemas: SchemaCache): void {
  const refused: string[] = [];
  for (const t of c.tools.values()) {
    const compiled = schemas.get(t.digest, t.tool.inputSchema);
    if (!compiled.ok) refused.push(`${t.name}:${compiled.reason}`);
  }
  if (refused.length > 0) log.warn('tools with unenforceable input schemas; their calls are refused', { count: refused.length, tools: refused.join(',') });
  if (catalogueState.hasSubscribers) catalogueState.publish({ tools: c.tools.size, unenforceable: refused.length });
}
