import { insufficientScopeChallenge } from '../auth/challenge.ts';
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
  return decide(snapshot, tool).effect === 'allow' && holdsAll(principal.scopes, toolMetadata(policy, tool).requiredScopes);
}

/**
 * Whether tools/list shows a tool: the caller may call it (for conditional
 * rows: some call could be allowed), or a refusal would only be recorded
 * because the tool, the policy or the deciding rows are in audit mode, so a
 * shadow rollout does not change what clients see.
 */
export function mayList(policy: Policy, snapshot: GrantSnapshot, principal: Principal, tool: string): boolean {
  return mayCall(policy, snapshot, principal, tool) || enforcementFor(policy, tool) === 'audit' || decide(snapshot, tool).audit === true;
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

/** 403 tool_not_granted, with an insufficient_scope challenge when scopes would help. */
export function notGranted(policy: Policy, scopes: readonly string[] | undefined): Refusal {
  if (scopes === undefined || scopes.length === 0) return { error: 'tool_not_granted' };
  return {
    error: 'tool_not_granted',
    data: { requiredScopes: scopes },
    headers: { 'www-authenticate': insufficientScopeChallenge(scopes, policy.authentication.resourceMetadataUrl) },
  };
}
