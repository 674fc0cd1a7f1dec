import { randomInt } from 'node:crypto';
import type { Pool } from 'undici';
import type { Catalogue } from './catalogue/catalogue.ts';
import { CatalogueSync } from './catalogue/sync.ts';
import { loadEnforcement, type Enforcement } from './config/enforcement.ts';
import type { Settings } from './config/settings.ts';
import { createDiscovery } from './discovery/service.ts';
import { SnapshotCache } from './grants/snapshot-cache.ts';
import { createEnforcer, type Enforcer } from './http/enforce.ts';
import { argumentsInterceptor } from './interceptors/arguments.ts';
import { grantsInterceptor } from './interceptors/grants.ts';
import { securityLevelInterceptor } from './interceptors/security-level.ts';
import type { CatalogueView } from './pipeline/catalogue-view.ts';
import { composeChain } from './pipeline/compose.ts';
import { catalogueState } from './telemetry/channels.ts';
import { log } from './telemetry/log.ts';
import { SchemaCache } from './validation/cache.ts';

/** Largest upstream tools/list response toolgate buffers to filter it. */
const MAX_REWRITE_BYTES = 16 * 1024 * 1024;

export class StartupError extends Error {
  override readonly name = 'StartupError';
}

export interface RunningEnforcement {
  readonly enforcer: Enforcer;
  /** Resolves once toolgate has its first copy of the upstream's catalogue. */
  readonly firstSync: Promise<void>;
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
  // Without a shared store the revision only has to be stable for this
  // process and distinct from other processes' (cursors carry it).
  const loaded = await loadEnforcement(path, randomInt(1, 2 ** 31));
  if (!loaded.ok) {
    const first = loaded.errors[0];
    throw new StartupError(`invalid policy ${path}: ${first?.path || '/'}: ${first?.message ?? 'invalid'}${loaded.errors.length > 1 ? ` (and ${loaded.errors.length - 1} more)` : ''}`);
  }
  const current: Enforcement = loaded.enforcement;
  const schemas = new SchemaCache();
  const sync = new CatalogueSync({
    url: new URL(settings.mcpPath, settings.upstream),
    refreshIntervalMs: settings.catalogueRefreshMs,
    onChange: (c) => reportEnforceability(c, schemas),
  });
  const catalogue: CatalogueView = {
    current: () => sync.current(),
    get: (name) => sync.current()?.tools.get(name),
    names: () => sync.current()?.tools.keys() ?? [],
    refresh: async () => {
      await sync.refresh();
    },
  };
  const chain = composeChain([grantsInterceptor(), securityLevelInterceptor(), argumentsInterceptor(schemas)]);
  const discovery = settings.deferredTools ? createDiscovery({ catalogue, revisionNow: () => current.revision }) : undefined;
  const enforcer = createEnforcer({ current: () => current, catalogue, chain, snapshots: new SnapshotCache(), pool, maxRewriteBytes: MAX_REWRITE_BYTES, discovery });
  let isSynced = false;
  const firstSync = sync.start().then(() => {
    isSynced = true;
    log.info('catalogue synced', { tools: sync.current()?.tools.size ?? 0 });
  });
  firstSync.catch(() => {});
  return { enforcer, firstSync, synced: () => isSynced, close: () => sync.close() };
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
