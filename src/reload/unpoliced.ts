import type { Policy } from '../config/policy/policy.ts';
import { log } from '../telemetry/log.ts';

/**
 * Says once, when a policy version that leaves resources or prompts
 * unpoliced comes into force, which surfaces any authenticated caller can
 * still reach: a policy names the surfaces it polices, and an old policy
 * keeps working as it did. Returns what it reported, for the next version.
 */
export function warnUnpoliced(policy: Policy, reported: string): string {
  const open = [
    ...(policy.resources === undefined ? ['resources'] : []),
    ...(policy.prompts === undefined ? ['prompts'] : []),
  ].join(',');
  if (open !== '' && open !== reported) {
    log.warn(
      'the policy has no section for these surfaces: any authenticated caller may read them; add a section to police them',
      { surfaces: open },
    );
  }
  return open;
}
