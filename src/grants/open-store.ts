import type { RedisConnections } from '../cache/connections.ts';
import type { Policy } from '../config/policy/policy.ts';
import type { Settings } from '../config/settings.ts';
import { StartupError } from '../errors.ts';
import { log } from '../telemetry/log.ts';
import { createFileGrantStore, type FileGrantStore } from './file-store.ts';
import type { GrantStore } from './store.ts';

export type OpenedGrantStore =
  | { readonly source: 'file'; readonly store: FileGrantStore }
  | { readonly source: 'redis'; readonly store: GrantStore };

/**
 * Grants come from the policy file (in process, a stable random revision per
 * process) or from Redis, shared by every replica of the policy domain,
 * through the sidecar's Redis connections (which the store never closes).
 */
export async function openGrantStore(
  settings: Pick<
    Settings,
    | 'grantSource'
    | 'grantsCheckIntervalMs'
    | 'grantsL1MaxEntries'
    | 'grantsL2TtlSeconds'
    | 'grantsStalenessMs'
    | 'policyDomain'
  >,
  policy: Policy,
  redis: RedisConnections | undefined,
): Promise<OpenedGrantStore> {
  if (settings.grantSource === 'file') {
    return {
      source: 'file',
      store: createFileGrantStore({ rows: policy.grants, l1MaxEntries: settings.grantsL1MaxEntries }),
    };
  }
  if (redis === undefined)
    throw new StartupError('invalid setting TOOLGATE_GRANT_SOURCE: redis needs TOOLGATE_REDIS_URL');
  if (policy.grants.length > 0)
    log.warn('grant rows in the policy file are ignored: grants come from Redis', { setting: 'TOOLGATE_GRANT_SOURCE' });
  // Imported here, so a sidecar whose grants come from the policy file never loads ioredis.
  const { createRedisGrantStore } = await import('./redis-store.ts');
  const opened = await createRedisGrantStore({
    connections: redis,
    domain: settings.policyDomain,
    stalenessMs: settings.grantsStalenessMs,
    checkIntervalMs: Math.min(settings.grantsCheckIntervalMs, settings.grantsStalenessMs),
    l1MaxEntries: settings.grantsL1MaxEntries,
    l2TtlSeconds: settings.grantsL2TtlSeconds,
  });
  if (!opened.ok) throw new StartupError(`invalid grant store settings: ${opened.problem}`);
  return { source: 'redis', store: opened.store };
}
