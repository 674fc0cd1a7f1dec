import type { PolicyInForce } from '../../auth/policy-in-force.ts';
import type { Principal } from '../../auth/types.ts';
import { resourceDecision } from '../../grants/surfaces.ts';
import { isRecord, parseRecord } from '../../json/record.ts';
import { uriProblem } from '../../mcp/resource-uri.ts';

const UPDATED = 'notifications/resources/updated';

/**
 * What a principal's server-to-client stream must not carry: a
 * `notifications/resources/updated` for a URI it may not read now, under
 * the policy in force when the event passes (a grant revoked after the
 * subscription stops its updates). An update whose URI toolgate cannot
 * judge is dropped too. Undefined while resources are not policed, so the
 * stream is not parsed at all.
 */
export function resourceUpdateDropper(
  current: () => PolicyInForce,
  principal: Principal,
): ((data: string) => boolean) | undefined {
  if (current().policy.resources === undefined) return undefined;
  return (data) => {
    // Most events are not updates: only those that could be are parsed.
    if (!data.includes(UPDATED)) return false;
    const message = parseRecord(data);
    if (message === undefined || message.method !== UPDATED) return false;
    const policy = current().policy;
    const uri = isRecord(message.params) ? message.params.uri : undefined;
    if (typeof uri !== 'string' || uriProblem(uri) !== undefined) return policy.resources !== undefined;
    const d = resourceDecision(policy, principal, uri, { protocolVersion: undefined, timeMs: Date.now() });
    return d !== undefined && d.decision.effect === 'deny' && !d.audit;
  };
}
