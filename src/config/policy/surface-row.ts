/**
 * Grant rows for the MCP surfaces besides tools: resources, by URI, and
 * prompts, by name. They live in the policy file only (the grant store and
 * its admin API hold tool rows) and follow the tool rows' rules: an exact
 * principal row overrides the `*` rows, deny wins at a level, and once a
 * policy has the section, what no row allows is denied.
 */
import type { Enforcement, GrantEffect } from './grant-row.ts';

interface SurfaceRowBase {
  /** An exact principal id, or `*` with `scopes`. */
  readonly principal: string;
  /** Sorted and unique; empty on exact-principal rows. */
  readonly scopes: readonly string[];
  readonly effect: GrantEffect;
  /** A CEL condition over `principal`, `request` and the surface's own variable (`resource` or `prompt`). */
  readonly when?: string;
  readonly enforcement?: Enforcement;
  /** The row's name in decisions; unnamed rows are named by their JSON pointer. */
  readonly name: string;
}

export interface ResourceRow extends SurfaceRowBase {
  /** `exact`: the URI itself; `prefix`: the URI and what continues it at a boundary (mcp/resource-uri.ts). */
  readonly match: 'exact' | 'prefix';
  /** In toolgate's normal form (mcp/resource-uri.ts), checked at load. */
  readonly uri: string;
}

export interface PromptRow extends SurfaceRowBase {
  readonly prompt: string;
}

/** One surface's section of the policy. Absent from the policy: the surface is not policed. */
export interface Surface<R> {
  /** Shadow mode for the whole surface; undefined: the policy's `enforcement`. */
  readonly enforcement: Enforcement | undefined;
  readonly grants: readonly R[];
}
