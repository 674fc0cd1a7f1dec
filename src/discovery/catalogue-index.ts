import type { CredentialStrength, Principal } from '../auth/types.ts';
import { toolMetadata, type Policy } from '../config/policy/policy.ts';
import type { GrantSnapshot } from '../grants/types.ts';
import { mayList } from '../grants/visibility.ts';
import { buildIndex, type DiscoveryIndex } from './engine/engine.ts';

type Tools = ReadonlyMap<string, { readonly tool: Readonly<Record<string, unknown>> }>;

/**
 * The discovery index of the catalogue in force, rebuilt only when the
 * catalogue (by digest) or the policy (aliases and examples) changes, and
 * the set of tools a caller may call, remembered per grant snapshot. Shared
 * by every door onto discovery (MCP method, injected tool, gRPC).
 */
export class CatalogueIndex {
  #indexed: { digest: string; policy: Policy; index: DiscoveryIndex } | undefined;
  readonly #allowed = new WeakMap<
    GrantSnapshot,
    { digest: string; policy: Policy; strength: CredentialStrength; allowed: ReadonlySet<string> }
  >();

  index(digest: string, policy: Policy, tools: Tools): DiscoveryIndex {
    if (this.#indexed?.digest === digest && this.#indexed.policy === policy) return this.#indexed.index;
    const docs = [...tools.values()].map(({ tool }) => {
      const meta = toolMetadata(policy, tool.name as string);
      return {
        name: tool.name as string,
        title: typeof tool.title === 'string' ? tool.title : undefined,
        description: typeof tool.description === 'string' ? tool.description : undefined,
        inputSchema: tool.inputSchema,
        aliases: meta.aliases,
        examples: meta.examples,
      };
    });
    this.#indexed = { digest, policy, index: buildIndex(docs) };
    return this.#indexed.index;
  }

  /**
   * The catalogue tools this principal may list (may call, with a credential
   * that can meet their security level): permissions apply before ranking.
   */
  allowed(
    policy: Policy,
    snapshot: GrantSnapshot,
    principal: Principal,
    digest: string,
    names: Iterable<string>,
  ): ReadonlySet<string> {
    const strength = principal.credentialStrength;
    const hit = this.#allowed.get(snapshot);
    if (hit?.digest === digest && hit.policy === policy && hit.strength === strength) return hit.allowed;
    const allowed = new Set<string>();
    for (const name of names) if (mayList(policy, snapshot, principal, name)) allowed.add(name);
    this.#allowed.set(snapshot, { digest, policy, strength, allowed });
    return allowed;
  }
}
