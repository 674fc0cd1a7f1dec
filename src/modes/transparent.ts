/**
 * Transparent mode's composition root: no policy, so nothing to open
 * beyond the upstream pool main.ts already holds; every request is
 * forwarded unchecked, and start-up says so.
 */
import type { Pool } from 'undici';
import type { Settings } from '../config/settings.ts';
import { transparentPath } from '../pipeline/transparent.ts';
import { log } from '../telemetry/log.ts';
import type { Mode } from './mode.ts';

export function openTransparent(settings: Settings, pool: Pool): Mode {
  log.warn('no policy file configured: every request is forwarded unchecked', { setting: 'TOOLGATE_POLICY_FILE' });
  if (settings.deferredTools)
    log.warn('deferred tool listing needs a policy; it is off', { setting: 'TOOLGATE_DEFERRED_TOOLS' });
  return {
    path: transparentPath(settings, pool),
    sideEffect: () => undefined,
    firstSync: Promise.resolve(),
    grpc: undefined,
    synced: () => true,
    approvalPort: undefined,
  };
}
