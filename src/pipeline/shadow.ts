import { enforcementFor } from '../config/policy/policy.ts';
import type { ErrorId } from '../errors.ts';
import type { Exchange, Verdict } from '../interceptors/contract.ts';

/**
 * Shadow mode (`enforcement: audit`): which refusals it turns into records.
 * Only decisions about a well-formed, authenticated call honour it: grants
 * and conditions, the security level, rate limits and argument schemas.
 * Authentication, session ownership, malformed or contradictory requests
 * (`header_mismatch`, `unknown_tool`), schemas toolgate cannot enforce and an
 * unavailable grant store are refused in every mode; external validators
 * have their own `mode`.
 */
const HONOURED: Readonly<Record<string, ReadonlySet<ErrorId>>> = {
  grants: new Set(['tool_not_granted']),
  conditions: new Set(['tool_not_granted']),
  security_level: new Set(['credential_too_weak']),
  rate_limit: new Set(['rate_limited']),
  arguments: new Set(['invalid_arguments', 'inexact_number']),
  resource_grants: new Set(['resource_not_granted']),
  prompt_grants: new Set(['prompt_not_granted']),
  completion_grants: new Set(['resource_not_granted', 'prompt_not_granted']),
};

/** Stages whose verdict already says whether it is shadowed: the surface's own `enforcement` decides, not a tool's. */
const SELF_SHADOWED = new Set(['resource_grants', 'prompt_grants', 'completion_grants']);

/** Whether this stage's refusal is only recorded: the deciding grant rows, the tool or the policy are in audit mode. */
export function shadowed(ex: Exchange, stage: string, v: Extract<Verdict, { kind: 'deny' }>): boolean {
  if (!Object.hasOwn(HONOURED, stage) || !(HONOURED[stage] as ReadonlySet<ErrorId>).has(v.error)) return false;
  return v.audit === true || (!SELF_SHADOWED.has(stage) && enforcementFor(ex.policy, ex.message.name) === 'audit');
}
