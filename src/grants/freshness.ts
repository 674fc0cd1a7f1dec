import { grantState } from '../telemetry/channels.ts';
import type { GrantStore } from './store.ts';

/**
 * Publishes, once a second, when the store last confirmed its revision, for
 * the revision gauges: the exported age grows from that time whether or not
 * the revision is still trusted, and stays 0 for grants held in process.
 * Returns what stops it.
 */
export function publishFreshness(grants: GrantStore): () => void {
  const timer = setInterval(() => {
    const revision = grants.revision();
    const confirmedAtMs = grants.confirmedAt();
    if ((revision !== undefined || confirmedAtMs !== undefined) && grantState.hasSubscribers)
      grantState.publish({ revision, confirmedAtMs });
  }, 1000);
  timer.unref();
  return () => clearInterval(timer);
}
