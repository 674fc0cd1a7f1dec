import { buildVerifiers } from './from-policy.ts';
import type { ReplayStore } from './replay-store.ts';
import type { Verifier } from './types.ts';
import type { ConfigError, Policy } from '../config/policy/policy.ts';

/**
 * The policy in force and the verifiers built from it, as one immutable
 * value: a request reads it once, so a reload can never hand it metadata from
 * one version and verifiers from another. Grants live in the grant store,
 * which carries the control revision.
 */
export interface PolicyInForce {
  readonly policy: Policy;
  readonly verifiers: readonly Verifier[];
}

export type PolicyInForceResult =
  | { ok: true; policyInForce: PolicyInForce }
  | { ok: false; errors: readonly ConfigError[] };

/** Builds the verifiers a loaded policy asks for and pairs them with it. */
export async function buildPolicyInForce(policy: Policy, replayStore?: ReplayStore): Promise<PolicyInForceResult> {
  const built = await buildVerifiers(policy.authentication, replayStore === undefined ? {} : { replayStore });
  if (!built.ok) return built;
  return { ok: true, policyInForce: Object.freeze({ policy, verifiers: built.verifiers }) };
}
