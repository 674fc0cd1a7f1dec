import { insufficientScopeChallenge } from '../auth/challenge.ts';
import { strengthCanReach } from '../auth/strength.ts';
import type { Principal } from '../auth/types.ts';
import { enforcementFor, toolMetadata, type Policy } from '../config/policy/policy.ts';
import { holdsAll, scopesThatWouldGrant } from './rules.ts';
import { decide } from './snapshot.ts';
import type { GrantSnapshot } from './types.ts';
import type { GrantRow } from '../config/policy/grant-row.ts';
import type { Refusal } from '../mcp/jsonrpc.ts';

/**
 * Whether a principal may call (and therefore see) a tool: an allowing grant
 * and every scope the tool's metadata requires. Shared by tools/call and the
 * tools/list filter so the two can never disagree.
 */
export function mayCall(policy: Policy, snapshot: GrantSnapshot, principal: Principal, tool: string): boolean {
  return (
    decide(snapshot, tool).effect === 'allow' && holdsAll(principal.scopes, toolMetadata(policy, tool).requiredScopes)
  );
}

/**
 * Whether a tool belongs in this principal's tools/list and discovery
 * results. A refusal that would only be recorded (the tool, the policy or the
 * deciding rows are in audit mode) lists it, so a shadow rollout does not
 * change what clients see. Otherwise the caller may call it (for conditional
 * rows: some call could be allowed), and its credential can meet the tool's
 * security level now or after a step-up: a tool whose calls could only ever
 * fail with credential_too_weak is not offered.
 */
export function mayList(policy: Policy, snapshot: GrantSnapshot, principal: Principal, tool: string): boolean {
  if (enforcementFor(policy, tool) === 'audit') return true;
  if (!mayCall(policy, snapshot, principal, tool)) return decide(snapshot, tool).audit === true;
  const oneTime = policy.authentication.jwt?.oneTime !== undefined;
  return strengthCanReach(toolMetadata(policy, tool).securityLevel, principal.credentialStrength, oneTime);
}

/**
 * The scopes whose grant would let this principal call the tool, when scopes
 * can help at all: those of a `*` allow row it lacks, plus the tool's own
 * required scopes. `toolRows` are all rows naming the tool; undefined (grant
 * storage unavailable) means no advice, never a guess.
 */
export function scopesThatWouldHelp(
  policy: Policy,
  snapshot: GrantSnapshot,
  principal: Principal,
  tool: string,
  toolRows: readonly GrantRow[] | undefined,
): string[] | undefined {
  const required = toolMetadata(policy, tool).requiredScopes;
  const allowed = decide(snapshot, tool).effect === 'allow';
  if (!allowed && toolRows === undefined) return undefined;
  const fromRows = allowed ? [] : scopesThatWouldGrant(toolRows ?? [], principal, tool);
  if (fromRows === undefined) return undefined;
  const all = [...new Set([...fromRows, ...required])].sort();
  return all.some((s) => !principal.scopes.has(s)) ? all : undefined;
}

/** 403 tool_not_granted (or no_tool_granted, for a listing), with an insufficient_scope challenge when scopes would help. */
export function notGranted(
  policy: Policy,
  scopes: readonly string[] | undefined,
  error: 'tool_not_granted' | 'no_tool_granted' = 'tool_not_granted',
): Refusal {
  if (scopes === undefined || scopes.length === 0) return { error };
  return {
    error,
    data: { requiredScopes: scopes, hint: 'request_scopes' },
    headers: { 'www-authenticate': insufficientScopeChallenge(scopes, policy.authentication.resourceMetadataUrl) },
  };
}
