/**
 * All wiring, and nothing else: settings → upstream pool → policy (policy in
 * force, grant store, catalogue, interceptor chain, discovery) → request path
 * → servers; and the reverse on SIGTERM, with a drain.
 *
 * What only a setting needs is imported where that setting is read, not at
 * the top: policy mode with a policy file, the gRPC API with TOOLGATE_GRPC,
 * Redis with a Redis URL, discovery with deferred tools, the validator
 * clients with a policy that names validators. A transparent sidecar so
 * never loads (or holds in memory) any of them.
 */
import type { GuardOptions } from './cache/guarded-write.ts';
import type { Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'undici';
import type { PolicyInForce } from './auth/policy-in-force.ts';
import type { ReplayStore } from './auth/replay-store.ts';
import type { RedisClient, RedisConfig } from './cache/redis.ts';
import type { SideEffect } from './config/policy/raw.ts';
import type { Settings } from './config/settings.ts';
import type { ListChangedRelay } from './discovery/list-changed-redis.ts';
import type { DiscoveryService } from './discovery/service.ts';
import { StartupError } from './errors.ts';
import { warnUnpoliced } from './config/reload/unpoliced.ts';
import type { FileGrantStore } from './grants/file-store.ts';
import type { GrpcPolicyDeps } from './grpc/deps.ts';
import type { ApproverPageOptions } from './http/approver/server.ts';
import type { RunningGrpc } from './grpc/server.ts';
import { createAdminServer } from './http/admin.ts';
import { installClientErrorHandler } from './http/client-error.ts';
import { createServer } from './http/node-http.ts';
import { createTrafficHandler } from './http/handler.ts';
import { closeServer, countConnections, drain, listen } from './http/lifecycle.ts';
import { bindOf } from './http/listen-error.ts';
import type { RequestPath } from './pipeline/request-path.ts';
import { transparentPath } from './pipeline/transparent.ts';
import { grantState } from './telemetry/channels.ts';
import { startHeapTrim, type HeapTrimmer } from './telemetry/heap-trim.ts';
import { log, setLogLevel } from './telemetry/log.ts';
import { createMetrics } from './telemetry/metrics.ts';
import { startTelemetry } from './telemetry/start.ts';
import { createUpstreamPool } from './upstream/pool.ts';
import { waitForUpstream } from './upstream/probe.ts';

/** Largest upstream tools/list response toolgate buffers to filter it. */
const MAX_REWRITE_BYTES = 16 * 1024 * 1024;
/** Session bindings kept per sidecar (the README's TOOLGATE_SESSION_IDLE_MS row says so). */
const MAX_SESSIONS = 100_000;

export interface Toolgate {
  readonly port: number;
  readonly adminPort: number;
  /** The gRPC API port, when TOOLGATE_GRPC is on. */
  readonly grpcPort: number | undefined;
  /** The approver page's port, when TOOLGATE_APPROVAL_PORT is set (with a policy). */
  readonly approvalPort: number | undefined;
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
  const handleTraffic = createTrafficHandler(settings, path);
  const traffic = createServer(
    {
      maxHeaderSize: settings.maxHeaderBytes,
      requireHostHeader: false,
      headersTimeout: settings.clientHeadersTimeoutMs,
      // Node checks the header timeout on this period; its default (30 s)
      // let slow connections outlive the timeout by that much.
      connectionsCheckingInterval: Math.min(1000, settings.clientHeadersTimeoutMs),
    },
    handleTraffic,
  );
  // Answered by the request path once it reads the body (stages/body.ts), not by Node on arrival.
  traffic.on('checkContinue', handleTraffic);
  countConnections(traffic, settings.maxConnections);
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

  // A listener that cannot bind stops the start, and nothing opened so far may keep the process alive.
  const abandon = async (err: unknown): Promise<never> => {
    await Promise.all([closeServer(traffic), closeServer(admin), pool.close(), policy?.close(), telemetry.close()]);
    metrics.dispose();
    throw err;
  };
  await Promise.all([listen(traffic, bindOf(settings, 'port')), listen(admin, bindOf(settings, 'adminPort'))]).catch(abandon);
  let grpc: RunningGrpc | undefined;
  if (settings.grpcEnabled) {
    grpc = await import('./grpc/server.ts').then((m) => m.startGrpcServer({ settings, notReadyReasons: reasons, policy: policy?.grpc })).catch(abandon);
  }
  const port = (traffic.address() as AddressInfo).port;
  const adminPort = (admin.address() as AddressInfo).port;
  log.info('listening', { port, adminPort, grpcPort: grpc?.port, upstream: settings.upstream.origin, mcpPath: settings.mcpPath });

  const answered = waitForUpstream(pool, settings.mcpPath, lifetime.signal).then(() => {
    if (!lifetime.signal.aborted) upstreamAnswered = true;
  });
  let trimmer: HeapTrimmer | undefined;
  const ready = Promise.all([answered, policy?.firstSync]).then(() => {
    if (lifetime.signal.aborted) return;
    log.info('ready');
    // From ready on: the start-up is the first activity it may give back.
    if (settings.heapTrimIdleMs > 0) trimmer = startHeapTrim(settings.heapTrimIdleMs);
  });

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      draining = true;
      lifetime.abort();
      trimmer?.stop();
      await Promise.all([drain(traffic, settings.drainTimeoutMs), grpc?.close(settings.drainTimeoutMs)]);
      await Promise.all([pool.close(), closeServer(admin), policy?.close()]);
      metrics.dispose();
      await telemetry.close();
      log.info('stopped');
    })();
    return closing;
  };
  return { port, adminPort, grpcPort: grpc?.port, approvalPort: policy?.approvalPort, ready, close };
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
  /** The approver page's port, when TOOLGATE_APPROVAL_PORT is set. */
  readonly approvalPort: number | undefined;
  close(): Promise<void>;
}

/** The approver page listener, loaded only with its port. */
async function startApproverPage(settings: Settings, options: ApproverPageOptions): Promise<{ server: Server; port: number }> {
  const { createApproverServer } = await import('./http/approver/server.ts');
  const server = createApproverServer(options);
  installClientErrorHandler(server);
  await listen(server, bindOf(settings, 'approvalPort'));
  const port = (server.address() as AddressInfo).port;
  log.info('approver page listening', { approvalPort: port });
  return { server, port };
}

/**
 * Policy mode: the policy in force (hot-reloaded), the grant store, the
 * upstream catalogue, and the interceptor chain. Order matters: whether the
 * tool exists (for every caller the same answer), who may call,
 * with what credential, how often, with which arguments; external
 * validators last, so they see only calls toolgate itself would forward.
 */
async function startPolicy(settings: Settings, file: string, pool: Pool): Promise<RunningPolicy> {
  const [
    { MemoryReplayStore }, { SessionBindings }, { reportEnforceability }, { CatalogueSync }, { toolMetadata }, { policyLoader },
    { watchPolicy }, { ListChangedStreams }, { openGrantStore }, { lazyValidatorClients }, { policyChecks },
    { createExternalValidators }, { composeChain },
    { policyPath }, { schemaCaches }, { ContractGuard }, { MemoryPinStore, RedisPinStore }, { visibleCatalogue },
    { contractQuarantineInterceptor }, { knownToolInterceptor }, { TokenBuckets }, { SharedBuckets }, { execution, openIdempotency, openTaskStore },
    { catalogueView }, { openApprovals, pageBaseUrl }, { approvalInterceptor },
  ] = await Promise.all([
    import('./auth/replay-store.ts'), import('./auth/session-bindings.ts'), import('./catalogue/enforceability.ts'),
    import('./catalogue/sync.ts'), import('./config/policy/policy.ts'), import('./config/reload/policy-loader.ts'),
    import('./config/reload/watch.ts'), import('./discovery/list-changed.ts'), import('./grants/open-store.ts'),
    import('./grpc/lazy-validator-clients.ts'), import('./pipeline/policy-interceptors.ts'), import('./interceptors/external-validator.ts'),
    import('./pipeline/compose.ts'), import('./pipeline/policy.ts'), import('./validation/schema-caches.ts'),
    import('./catalogue/contracts/guard.ts'), import('./catalogue/contracts/pins.ts'), import('./catalogue/contracts/visible.ts'),
    import('./interceptors/contract-quarantine.ts'), import('./interceptors/known-tool.ts'),
    import('./interceptors/rate-limit/buckets.ts'), import('./interceptors/rate-limit/shared-buckets.ts'), import('./execution/wiring.ts'),
    import('./catalogue/view.ts'), import('./approval/open.ts'), import('./interceptors/approval.ts'),
  ]);
  const shared = settings.redisUrl === undefined ? undefined : await connectRedis(settings, settings.redisUrl);
  // One replay store for every policy version: a one-time token spent before
  // a reload stays spent after it.
  const replayStore = shared?.replayStore ?? new MemoryReplayStore();
  let fileGrants: FileGrantStore | undefined;
  let current: PolicyInForce;
  let unpoliced = '';
  const callers = lazyValidatorClients();
  const validatorTargets = (policy: PolicyInForce['policy']) => policy.validators.map((v) => v.target);
  // Assigned once the catalogue sync exists; a policy applied before that is read by the first evaluation.
  let contracts: { evaluate(): Promise<void> } | undefined;
  const watcher = watchPolicy({
    path: file,
    load: policyLoader({ replayStore }),
    // Synchronous, so a request sees the new grants and the new metadata, or neither.
    onApply: ({ value }) => {
      if (fileGrants !== undefined && fileGrants.replaceRows(value.policy.grants) === undefined) throw new Error('grant rows refused');
      current = value;
      unpoliced = warnUnpoliced(value.policy, unpoliced);
      void contracts?.evaluate();
      callers.load(validatorTargets(value.policy)).catch((err: unknown) => log.error('cannot load the gRPC client for external validators', { error: (err as Error).message }));
    },
  });
  const first = await watcher.start();
  if (!first.ok) {
    shared?.close();
    const e = first.errors[0];
    throw new StartupError(`invalid policy ${file}: ${e?.path || '/'}: ${e?.message ?? 'invalid'}${first.errors.length > 1 ? ` (and ${first.errors.length - 1} more)` : ''}`);
  }
  current = first.value;
  await callers.load(validatorTargets(current.policy));
  const opened = await openGrantStore(settings, current.policy, shared?.config).catch(async (err: unknown) => {
    shared?.close();
    await watcher.close();
    throw err;
  });
  const grants = opened.store;
  if (opened.source === 'file') fileGrants = opened.store;
  const schemas = schemaCaches();
  const listChanged = new ListChangedStreams();
  const sync = new CatalogueSync({
    url: new URL(settings.mcpPath, settings.upstream),
    dispatcher: pool,
    refreshIntervalMs: settings.catalogueRefreshMs,
    onChange: (c) => {
      void reportEnforceability(c, schemas(current.policy).registry, () => sync.current() === c);
      void contracts?.evaluate();
    },
  });
  const guard = new ContractGuard({
    store: shared === undefined ? new MemoryPinStore() : new RedisPinStore(shared.client, settings.policyDomain, shared.guard),
    config: () => current.policy.contracts,
    catalogue: () => sync.current(),
    // A tool left or joined what callers may see: every open stream is told to list again.
    onQuarantineChange: () => listChanged.notifyAll(),
    refreshCatalogue: () => void sync.refresh(),
  });
  contracts = guard;
  // Quarantined tools are neither listed, discovered nor described to callers.
  const visible = visibleCatalogue(() => sync.current(), () => guard.quarantinedTools());
  // Everything synced, quarantined tools included: whether a tool exists at all.
  const synced = catalogueView(() => sync.current(), () => sync.refresh());
  const catalogue = catalogueView(visible, () => sync.refresh());
  const validators = createExternalValidators(callers);
  const local = new TokenBuckets(() => performance.now());
  const limiter = shared === undefined ? local : new SharedBuckets({ client: shared.client, domain: settings.policyDomain, fallback: local });
  // Human approval: records shared through Redis when configured; the page only with its port.
  let pagePort: number | undefined;
  const approval = await openApprovals(settings, shared, () => pageBaseUrl(settings, pagePort));
  const page = settings.approvalPort === undefined ? undefined : await startApproverPage(settings, {
    approvals: approval.approvals,
    verifiers: () => current.verifiers,
    catalogue: synced,
    sessionKey: approval.sessionKey,
    csrfKey: approval.csrfKey,
    ...(settings.approvalTrustedHeader !== undefined && { trusted: { idHeader: settings.approvalTrustedHeader, scopesHeader: settings.approvalTrustedScopesHeader } }),
  });
  pagePort = page?.port;
  const { checks, rateLimit } = policyChecks(schemas, {
    knownTool: knownToolInterceptor(synced),
    hideUngranted: settings.hideUngranted,
    quarantine: contractQuarantineInterceptor(guard),
    limiter,
    approval: approvalInterceptor({ approvals: approval.approvals, stateKey: approval.stateKey, grantsFromFile: opened.source === 'file', waitMs: settings.approvalWaitMs }),
  });
  const interceptors = [...checks, validators.interceptor];
  // What each caller may see was decided under the old grants: every open stream is told to list again.
  // An approval bumps the revision too, so pins are read again.
  grants.onRevision(() => {
    listChanged.notifyAll();
    void guard.evaluate();
  });
  let relay: ListChangedRelay | undefined;
  let discovery: DiscoveryService | undefined;
  if (settings.deferredTools) {
    const [{ ACTIVATION_TTL_MS, createDiscovery }, { RedisActivations }, { ListChangedRelay: Relay }] = await Promise.all([
      import('./discovery/service.ts'), import('./discovery/activations-redis.ts'), import('./discovery/list-changed-redis.ts'),
    ]);
    const activations = shared === undefined ? undefined : new RedisActivations({ client: shared.client, domain: settings.policyDomain, ttlMs: ACTIVATION_TTL_MS, timeoutMs: shared.config.commandTimeoutMs });
    relay = shared === undefined ? undefined : new Relay({ config: shared.config, publisher: shared.client, domain: settings.policyDomain, streams: listChanged });
    discovery = createDiscovery({ catalogue, revisionNow: () => grants.revision() ?? -1, activations, listChanged, relay });
  }
  const idempotency = await openIdempotency(settings, shared);
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
    mayList: (tool) => guard.mayList(tool),
    schemas,
    execution: execution(settings, pool, idempotency, openTaskStore(settings, shared === undefined ? undefined : { client: shared.client, commandTimeoutMs: shared.config.commandTimeoutMs })),
  });
  // An approval bumps the revision like a grant change, so cursors and cached lists made before it are refused.
  const bumpRevision = async (): Promise<number | undefined> => {
    if (fileGrants !== undefined) return fileGrants.replaceRows(current.policy.grants);
    if (shared === undefined) return undefined;
    // Loaded here: the Redis grant source pulls in ioredis, which only a Redis URL may load.
    const { createRedisSource } = await import('./grants/sources/redis.ts');
    const bumped = await createRedisSource(shared.client, settings.policyDomain)?.bump();
    return bumped?.ok === true ? bumped.revision : undefined;
  };
  let isSynced = false;
  const firstSync = sync.start().then(() => {
    isSynced = true;
    log.info('catalogue synced', { tools: sync.current()?.tools.size ?? 0 });
  });
  firstSync.catch(() => {});
  // Freshness for the revision gauges: the time of the store's last
  // confirmation, so the exported age grows from it whether or not the
  // revision is still trusted (and stays 0 for grants held in process).
  const freshness = setInterval(() => {
    const revision = grants.revision();
    const confirmedAtMs = grants.confirmedAt();
    if ((revision !== undefined || confirmedAtMs !== undefined) && grantState.hasSubscribers) grantState.publish({ revision, confirmedAtMs });
  }, 1000);
  freshness.unref();
  // Pins approved elsewhere (another replica, the CLI) are read again even when no revision change announces them.
  const recheck = setInterval(() => void guard.evaluate(), settings.catalogueRefreshMs);
  recheck.unref();
  return {
    path,
    grpc: { current: () => current, grants, catalogue, interceptors, contracts: guard, bumpRevision, approvals: approval.approvals },
    approvalPort: page?.port,
    sideEffect: (tool) => toolMetadata(current.policy, tool).sideEffect,
    firstSync,
    synced: () => isSynced,
    close: async () => {
      clearInterval(freshness);
      clearInterval(recheck);
      validators.close();
      await Promise.all([watcher.close(), sync.close(), grants.close(), idempotency.close?.(), page === undefined ? undefined : closeServer(page.server)]);
      relay?.close();
      shared?.close();
    },
  };
}

interface SharedRedis {
  readonly config: RedisConfig;
  readonly client: RedisClient;
  /** How records a failover must not undo are written (one-time tokens, approval spends, idempotency claims, contract pins). */
  readonly guard: GuardOptions;
  readonly replayStore: ReplayStore;
  close(): void;
}

/** One connection for one-time-token records, approvals and discovery activations; the grant store opens its own. */
async function connectRedis(settings: Settings, url: string): Promise<SharedRedis> {
  const [{ createRedisClient, parseRedisConfig }, { RedisReplayStore }] = await Promise.all([
    import('./cache/redis.ts'), import('./auth/redis-replay-store.ts'),
  ]);
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
  // One setting for every record a failover must not undo (cache/guarded-write.ts).
  const guard = { waitReplicas: settings.redisReplayWaitReplicas ?? (parsed.config.mode === 'sentinel' ? 1 : 0), timeoutMs: parsed.config.commandTimeoutMs };
  return {
    config: parsed.config,
    client,
    guard,
    replayStore: new RedisReplayStore({ client, domain: settings.policyDomain, ...guard }),
    close: () => client.disconnect(),
  };
}
