/**
 * DiscoveryService.Discover: the engine and input rules of toolgate/discover
 * (permissions applied before ranking, ties by name, local ranking only),
 * answering ranked candidates without schemas, so no page bound or cursor is
 * needed: one answer holds up to `limit` candidates.
 */
import type { Principal } from '../auth/types.ts';
import { toolMetadata } from '../config/policy/policy.ts';
import { CatalogueIndex } from '../discovery/catalogue-index.ts';
import { readDiscoverParams } from '../discovery/params.ts';
import type { ErrorId } from '../errors.ts';
import type { GrpcPolicyDeps } from './deps.ts';
import type { DiscoverRequest__Output } from './generated/toolgate/v1/DiscoverRequest.ts';
import type { DiscoverResponse } from './generated/toolgate/v1/DiscoverResponse.ts';

export type DiscoverResult =
  | { readonly ok: true; readonly response: DiscoverResponse }
  | { readonly ok: false; readonly error: ErrorId };

export class Discoverer {
  readonly #deps: GrpcPolicyDeps;
  readonly #index = new CatalogueIndex();

  constructor(deps: GrpcPolicyDeps) {
    this.#deps = deps;
  }

  async discover(principal: Principal, req: DiscoverRequest__Output): Promise<DiscoverResult> {
    const requested = req.limit;
    const params = readDiscoverParams(
      requested === 0 ? { query: req.query } : { query: req.query, limit: requested },
      false,
    );
    if (!params.ok) return { ok: false, error: 'invalid_params' };
    const { policy } = this.#deps.current();
    const cat = this.#deps.catalogue.current();
    if (cat === undefined) return { ok: false, error: 'upstream_unavailable' };
    const snap = await this.#deps.grants.snapshot(principal);
    if (!snap.ok) return { ok: false, error: 'grants_unavailable' };
    const allowed = this.#index.allowed(policy, snap.snapshot, principal, cat.digest, cat.tools.keys());
    const found = this.#index
      .index(cat.digest, policy, cat.tools)
      .search(params.params.query, { limit: params.params.limit, allowed });
    return {
      ok: true,
      response: {
        candidates: found.results.map((hit) => {
          const meta = toolMetadata(policy, hit.name);
          return {
            name: hit.name,
            score: hit.score,
            matchReasons: [...hit.matched],
            tier: meta.tier,
            sideEffect: meta.sideEffect,
          };
        }),
        requestedLimit: requested,
        effectiveLimit: params.params.limit,
        authorizedCount: allowed.size,
        total: found.total,
        revision: snap.snapshot.revision,
      },
    };
  }
}
