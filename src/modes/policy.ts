/**
 * Policy mode's composition root: the policy in force (hot-reloaded), the
 * grant store, the upstream catalogue and its contract guard, the
 * interceptor chain, approvals, and the request path over them. Loaded by
 * main.ts only when a policy file is configured, so a transparent sidecar
 * never loads any of this; what only one setting needs beyond it (Redis,
 * discovery, the approver page) is loaded where that setting is read.
 *
 * Every step that opens something registers its close on `stack` as soon
 * as it has opened, so a failed start and a stop share one teardown, in
 * reverse order.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'undici';
import { openApprovals, pageBaseUrl } from '../approval/open.ts';
import type { PolicyInForce } from '../auth/policy-in-force.ts';
import type { ReplayStore } from '../auth/replay-store.ts';
import { MemoryReplayStore } from '../auth/replay-store.ts';
import { SessionBindings } from '../auth/session-bindings.ts';
import type { RedisConnections } from '../cache/connections.ts';
import type { GuardOptions } from '../cache/guarded-write.ts';
import type { RedisClient, RedisConfig } from '../cache/redis.ts';
import { ContractGuard } from '../catalogue/contracts/guard.ts';
import { MemoryPinStore, RedisPinStore } from '../catalogue/contracts/pins.ts';
import { visibleCatalogue } from '../catalogue/contracts/visible.ts';
import { reportEnforceability } from '../catalogue/enforceability.ts';
import { CatalogueSync } from '../catalogue/sync.ts';
import { catalogueView } from '../catalogue/view.ts';
import { toolMetadata } from '../config/policy/policy.ts';
import { policyLoader } from '../reload/policy-loader.ts';
import { warnUnpoliced } from '../reload/unpoliced.ts';
import { watchPolicy } from '../reload/watch.ts';
import type { Settings } from '../config/settings.ts';
import { ListChangedStreams } from '../discovery/list-changed.ts';
import type { DiscoveryService } from '../discovery/service.ts';
import { StartupError } from '../errors.ts';
import { execution, openIdempotency, openTaskStore } from '../execution/wiring.ts';
import { revisionBumper } from '../grants/bump.ts';
import type { FileGrantStore } from '../grants/file-store.ts';
import { publishFreshness } from '../grants/freshness.ts';
import { openGrantStore } from '../grants/open-store.ts';
import { lazyValidatorClients } from '../grpc/lazy-validator-clients.ts';
import type { ApproverPageOptions } from '../http/approver/server.ts';
import { installClientErrorHandler } from '../http/client-error.ts';
import { closeServer, listen } from '../http/lifecycle.ts';
import { bindOf } from '../http/listen-error.ts';
import { approvalInterceptor } from '../interceptors/approval.ts';
import { contractQuarantineInterceptor } from '../interceptors/contract-quarantine.ts';
import { createExternalValidators } from '../interceptors/external-validator.ts';
import { knownToolInterceptor } from '../interceptors/known-tool.ts';
import { TokenBuckets } from '../interceptors/rate-limit/buckets.ts';
import { SharedBuckets } from '../interceptors/rate-limit/shared-buckets.ts';
import { composeChain } from '../pipeline/compose.ts';
import { policyChecks } from '../pipeline/policy-interceptors.ts';
import { policyPath } from '../pipeline/policy.ts';
import { log } from '../telemetry/log.ts';
import { trimAfterLoad } from '../telemetry/heap-trim.ts';
import { schemaCaches } from '../validation/schema-caches.ts';
import type { Mode } from './mode.ts';

/** Largest upstream tools/list response toolgate buffers to filter it. */
const MAX_REWRITE_BYTES = 16 * 1024 * 1024;
/** Session bindings kept per sidecar (the README's TOOLGATE_SESSION_IDLE_MS row says so). */
const MAX_SESSIONS = 100_000;

function validatorTargets(policy: PolicyInForce['policy']): string[] {
  return policy.validators.map((v) => v.target);
}

/**
 * Order matters in the chain: whether the tool exists (for every caller the
 * same answer), who may call, with what credential, how often, with which
 * arguments; external validators last, so they see only calls toolgate
 * itself would forward.
 */
export async function openPolicy(
  settings: Settings,
  file: string,
  pool: Pool,
  stack: AsyncDisposableStack,
): Promise<Mode> {
  const shared = settings.redisUrl === undefined ? undefined : await connectRedis(settings, settings.redisUrl);
  // First on the stack, so closed last: every component using the connections has let go of them by then.
  if (shared !== undefined) stack.defer(() => shared.close());
  // One replay store for every policy version: a one-time token spent before
  // a reload stays spent after it.
  const replayStore = shared?.replayStore ?? new MemoryReplayStore();
  let fileGrants: FileGrantStore | undefined;
  let current: PolicyInForce;
  let unpoliced = '';
  const callers = lazyValidatorClients();
  // Assigned once the catalogue sync exists; a policy applied before that is read by the first evaluation.
  let contracts: { evaluate(): Promise<void> } | undefined;
  const watcher = watchPolicy({
    path: file,
    // A large static key file's parse leaves the heap at its peak: given back at once unless trims are off.
    load: settings.heapTrimIdleMs > 0 ? trimAfterLoad(policyLoader({ replayStore })) : policyLoader({ replayStore }),
    // Synchronous, so a request sees the new grants and the new metadata, or neither.
    onApply: ({ value }) => {
      if (fileGrants !== undefined && fileGrants.replaceRows(value.policy.grants) === undefined)
        throw new Error('grant rows refused');
      current = value;
      unpoliced = warnUnpoliced(value.policy, unpoliced);
      void contracts?.evaluate();
      callers
        .load(validatorTargets(value.policy))
        .catch((err: unknown) =>
          log.error('cannot load the gRPC client for external validators', { error: (err as Error).message }),
        );
    },
  });
  stack.defer(() => watcher.close());
  const first = await watcher.start();
  if (!first.ok) {
    const e = first.errors[0];
    throw new StartupError(
      `invalid policy ${file}: ${e?.path || '/'}: ${e?.message ?? 'invalid'}${first.errors.length > 1 ? ` (and ${first.errors.length - 1} more)` : ''}`,
    );
  }
  current = first.value;
  const validators = createExternalValidators(callers);
  stack.defer(() => validators.close());
  await callers.load(validatorTargets(current.policy));
  const opened = await openGrantStore(settings, current.policy, shared?.connections);
  const grants = opened.store;
  stack.defer(() => grants.close());
  if (opened.source === 'file') fileGrants = opened.store;
  // The domain's rows in Redis over the shared command connection: revision bumps and GrantAdmin write through it.
  const grantRows =
    opened.source === 'redis' && shared !== undefined
      ? (await import('../grants/sources/redis.ts')).createRedisSource(shared.client, settings.policyDomain)
      : undefined;
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
  stack.defer(() => sync.close());
  const guard = new ContractGuard({
    store:
      shared === undefined
        ? new MemoryPinStore()
        : new RedisPinStore(shared.client, settings.policyDomain, shared.guard),
    config: () => current.policy.contracts,
    catalogue: () => sync.current(),
    // A tool left or joined what callers may see: every open stream is told to list again.
    onQuarantineChange: () => listChanged.notifyAll(),
    refreshCatalogue: () => void sync.refresh(),
  });
  contracts = guard;
  // Quarantined tools are neither listed, discovered nor described to callers.
  const visible = visibleCatalogue(
    () => sync.current(),
    () => guard.quarantinedTools(),
  );
  // Everything synced, quarantined tools included: whether a tool exists at all.
  const synced = catalogueView(
    () => sync.current(),
    () => sync.refresh(),
  );
  const catalogue = catalogueView(visible, () => sync.refresh());
  const local = new TokenBuckets(() => performance.now());
  const limiter =
    shared === undefined
      ? local
      : new SharedBuckets({ client: shared.client, domain: settings.policyDomain, fallback: local });
  // Human approval: records shared through Redis when configured; the page only with its port.
  let pagePort: number | undefined;
  const approval = await openApprovals(settings, shared, () => pageBaseUrl(settings, pagePort));
  const page =
    settings.approvalPort === undefined
      ? undefined
      : await startApproverPage(settings, {
          approvals: approval.approvals,
          verifiers: () => current.verifiers,
          catalogue: synced,
          sessionKey: approval.sessionKey,
          csrfKey: approval.csrfKey,
          ...(settings.approvalTrustedHeader !== undefined && {
            trusted: { idHeader: settings.approvalTrustedHeader, scopesHeader: settings.approvalTrustedScopesHeader },
          }),
        });
  if (page !== undefined) stack.defer(() => closeServer(page.server));
  pagePort = page?.port;
  const { checks, rateLimit } = policyChecks(schemas, {
    knownTool: knownToolInterceptor(synced),
    hideUngranted: settings.hideUngranted,
    quarantine: contractQuarantineInterceptor(guard),
    limiter,
    approval: approvalInterceptor({
      approvals: approval.approvals,
      stateKey: approval.stateKey,
      grantsFromFile: opened.source === 'file',
      waitMs: settings.approvalWaitMs,
    }),
  });
  const interceptors = [...checks, validators.interceptor];
  // What each caller may see was decided under the old grants: every open stream is told to list again.
  // An approval bumps the revision too, so pins are read again.
  stack.defer(
    grants.onRevision(() => {
      listChanged.notifyAll();
      void guard.evaluate();
    }),
  );
  const discovery = settings.deferredTools
    ? await openDiscovery(settings, catalogue, () => grants.revision() ?? -1, listChanged, shared, stack)
    : undefined;
  const idempotency = await openIdempotency(settings, shared);
  stack.defer(() => idempotency.close?.());
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
    execution: execution(
      settings,
      pool,
      idempotency,
      openTaskStore(
        settings,
        shared === undefined ? undefined : { client: shared.client, commandTimeoutMs: shared.config.commandTimeoutMs },
      ),
    ),
  });
  // An approval bumps the revision like a grant change, so cursors and cached lists made before it are refused.
  const bumpRevision = revisionBumper(
    fileGrants !== undefined
      ? { kind: 'file', store: fileGrants, rows: () => current.policy.grants }
      : grantRows === undefined
        ? { kind: 'none' }
        : { kind: 'redis', source: grantRows },
  );
  let isSynced = false;
  const firstSync = sync.start().then(() => {
    isSynced = true;
    log.info('catalogue synced', { tools: sync.current()?.tools.size ?? 0 });
  });
  firstSync.catch(() => {});
  stack.defer(publishFreshness(grants));
  stack.defer(guard.recheckEvery(settings.catalogueRefreshMs));
  return {
    path,
    grpc: {
      current: () => current,
      grants,
      catalogue,
      interceptors,
      contracts: guard,
      bumpRevision,
      approvals: approval.approvals,
      grantRows,
    },
    approvalPort: page?.port,
    sideEffect: (tool) => toolMetadata(current.policy, tool).sideEffect,
    firstSync,
    synced: () => isSynced,
  };
}

/** The approver page listener, loaded only with its port. */
async function startApproverPage(
  settings: Settings,
  options: ApproverPageOptions,
): Promise<{ server: Server; port: number }> {
  const { createApproverServer } = await import('../http/approver/server.ts');
  const server = createApproverServer(options);
  installClientErrorHandler(server);
  await listen(server, bindOf(settings, 'approvalPort'));
  const port = (server.address() as AddressInfo).port;
  log.info('approver page listening', { approvalPort: port });
  return { server, port };
}

/** Deferred tool listing and its two discovery doors, loaded only with TOOLGATE_DEFERRED_TOOLS. */
async function openDiscovery(
  settings: Settings,
  catalogue: ReturnType<typeof catalogueView>,
  revisionNow: () => number,
  listChanged: ListChangedStreams,
  shared: SharedRedis | undefined,
  stack: AsyncDisposableStack,
): Promise<DiscoveryService> {
  const [{ ACTIVATION_TTL_MS, createDiscovery }, { RedisActivations }, { ListChangedRelay }] = await Promise.all([
    import('../discovery/service.ts'),
    import('../discovery/activations-redis.ts'),
    import('../discovery/list-changed-redis.ts'),
  ]);
  const activations =
    shared === undefined
      ? undefined
      : new RedisActivations({
          client: shared.client,
          domain: settings.policyDomain,
          ttlMs: ACTIVATION_TTL_MS,
          timeoutMs: shared.config.commandTimeoutMs,
        });
  const relay =
    shared === undefined
      ? undefined
      : new ListChangedRelay({ connections: shared.connections, domain: settings.policyDomain, streams: listChanged });
  if (relay !== undefined) stack.defer(() => relay.close());
  return createDiscovery({ catalogue, revisionNow, activations, listChanged, relay });
}

interface SharedRedis {
  readonly config: RedisConfig;
  /** The command connection and the subscriber, for everything in this sidecar that uses Redis. */
  readonly connections: RedisConnections;
  /** `connections.client`. */
  readonly client: RedisClient;
  /** How records a failover must not undo are written (one-time tokens, approval spends, idempotency claims, contract pins). */
  readonly guard: GuardOptions;
  readonly replayStore: ReplayStore;
  close(): void;
}

/**
 * The sidecar's two Redis connections (cache/connections.ts): one for every
 * command (grants, one-time tokens, approvals, idempotency records, tasks,
 * pins, activations, rate limits), one subscriber for every channel (grant
 * revisions, the list-changed relay). Nothing else in policy mode opens one.
 */
async function connectRedis(settings: Settings, url: string): Promise<SharedRedis> {
  const [{ parseRedisConfig }, { openRedisConnections }, { RedisReplayStore }] = await Promise.all([
    import('../cache/redis.ts'),
    import('../cache/connections.ts'),
    import('../auth/redis-replay-store.ts'),
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
  const connections = openRedisConnections(parsed.config);
  const { client } = connections;
  // One setting for every record a failover must not undo (cache/guarded-write.ts).
  const guard = {
    waitReplicas: settings.redisReplayWaitReplicas ?? (parsed.config.mode === 'sentinel' ? 1 : 0),
    timeoutMs: parsed.config.commandTimeoutMs,
  };
  return {
    config: parsed.config,
    connections,
    client,
    guard,
    replayStore: new RedisReplayStore({ client, domain: settings.policyDomain, ...guard }),
    close: () => connections.close(),
  };
}
