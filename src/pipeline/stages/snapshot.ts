import type { IncomingMessage } from 'node:http';
import type { Principal } from '../../auth/types.ts';
import type { GrantStore } from '../../grants/store.ts';
import type { GrantSnapshot } from '../../grants/types.ts';
import { publishDecision, snapshotLookup } from '../../telemetry/channels.ts';

/**
 * The caller's grants at the revision in force: synchronous when this replica
 * holds them, so the common path awaits nothing; undefined when they cannot
 * be confirmed, which the caller answers as grants_unavailable (fail closed).
 */
export function grantSnapshot(
  grants: GrantStore,
): (req: IncomingMessage, principal: Principal) => GrantSnapshot | undefined | Promise<GrantSnapshot | undefined> {
  return (req, principal) => {
    const pending = grants.snapshot(principal);
    const held = !(pending instanceof Promise);
    if (snapshotLookup.hasSubscribers) snapshotLookup.publish({ result: held ? 'hit' : 'miss' });
    return held ? settle(req, principal, pending) : pending.then((r) => settle(req, principal, r));
  };
}

function settle(
  req: IncomingMessage,
  principal: Principal,
  r: Awaited<ReturnType<GrantStore['snapshot']>>,
): GrantSnapshot | undefined {
  if (r.ok) return r.snapshot;
  publishDecision({ request: req, stage: 'grants', allowed: false, principal, error: 'grants_unavailable' });
  return undefined;
}
