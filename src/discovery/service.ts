import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { toolMetadata } from '../config/policy/policy.ts';
import type { ErrorId } from '../errors.ts';
import type { ErrorData, JsonRpcId } from '../mcp/jsonrpc.ts';
import { mayList } from '../grants/visibility.ts';
import type { CatalogueView } from '../catalogue/view.ts';
import { discovery } from '../telemetry/channels.ts';
import type { ResultEdit } from '../mcp/rewrite.ts';
import { ActivationStore, type Activations } from './activations.ts';
import { CatalogueIndex } from './catalogue-index.ts';
import { CursorCodec, type CursorBinding } from './cursor.ts';
import type { ListChangedStreams } from './list-changed.ts';
import { fitPage, type DiscoveredTool } from './page.ts';
import { readDiscoverParams, type DiscoverParams } from './params.ts';
import { keepTools, type Viewer } from './tools-list.ts';
import { SEARCH_TOOL, SEARCH_TOOL_NAME } from './search-tool.ts';

type DoorResult =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly error: ErrorId; readonly data?: ErrorData };

/** What discovery needs of one request: who asks, under which policy and grants, and the id to answer. */
interface Caller extends Viewer {
  readonly request: IncomingMessage;
  readonly message: { readonly id: JsonRpcId };
}

export interface DiscoveryService {
  /** The `toolgate/discover` method: `{query, limit?, cursor?}` → `{tools, total, nextCursor?}`. */
  discover(ex: Caller, params: unknown): Promise<DoorResult>;
  /** The `search_tools` tool: `{query, limit?}` → a CallToolResult with structuredContent and a text rendering. */
  searchTool(ex: Caller, args: unknown): Promise<DoorResult>;
  /** Deferred tools/list: critical, base, alwaysInclude and activated tools the caller may call, plus search_tools. */
  deferredList(ex: Caller, firstPage: boolean): Promise<ResultEdit>;
}

export interface DiscoveryDeps {
  readonly catalogue: CatalogueView;
  /** The grant revision in force now, to notice a change while a page was prepared. */
  readonly revisionNow: () => number;
  readonly activationTtlMs?: number;
  /** The index shared with other discovery doors (gRPC); its own when absent. */
  readonly index?: CatalogueIndex;
  /** Shared activations (Redis); in process when absent. */
  readonly activations?: Activations;
  /** Open notification streams to tell when an activation changes a caller's tools/list. */
  readonly listChanged?: ListChangedStreams;
  /** Tells the other replicas' streams too (activations in Redis). */
  readonly relay?: { publish(principal: string): void };
  readonly now?: () => number;
}

export const ACTIVATION_TTL_MS = 600_000;

const DEFERRED_TIERS = new Set(['critical', 'base']);

/** Tools a deferred tools/list shows whether or not discovery returned them. */
function alwaysListed(policy: Caller['policy'], name: string): boolean {
  const meta = toolMetadata(policy, name);
  return DEFERRED_TIERS.has(meta.tier) || meta.alwaysInclude;
}

/**
 * Permission-aware discovery over the upstream catalogue. The caller's
 * allowed set is applied before ranking (the engine computes its statistics
 * over allowed tools only), every page holds whole schemas within 64 KiB,
 * and cursors are signed and bound to everything that shaped the results.
 */
export function createDiscovery(deps: DiscoveryDeps): DiscoveryService {
  const now = deps.now ?? Date.now;
  const cursors = new CursorCodec(now);
  const activations: Activations =
    deps.activations ??
    new ActivationStore({ ttlMs: deps.activationTtlMs ?? ACTIVATION_TTL_MS, maxPrincipals: 10_000, now });
  const catalogueIndex = deps.index ?? new CatalogueIndex();

  /** Ranks and pages; `render` shapes the result for one door. */
  async function run(
    ex: Caller,
    p: DiscoverParams,
    render: (page: readonly DiscoveredTool[], complete: boolean, next: number, total: number) => unknown,
  ): Promise<DoorResult> {
    const began = performance.now();
    const cat = deps.catalogue.current();
    if (cat === undefined) return { ok: false, error: 'upstream_unavailable' };
    const binding: CursorBinding = {
      principal: ex.principal.id,
      scopes: ex.snapshot.scopes,
      catalogueDigest: cat.digest,
      revision: ex.snapshot.revision,
      grantsDigest: ex.snapshot.digest,
      query: p.query,
      limit: p.limit,
    };
    let offset = 0;
    let issuedAt = now();
    if (p.cursor !== undefined) {
      const state = cursors.decode(p.cursor, binding);
      if (state === undefined) return { ok: false, error: 'invalid_cursor' };
      offset = state.offset;
      issuedAt = state.issuedAt;
    }
    const allowed = catalogueIndex.allowed(ex.policy, ex.snapshot, ex.principal, cat.digest, cat.tools.keys());
    const found = catalogueIndex
      .index(cat.digest, ex.policy, cat.tools)
      .search(p.query, { limit: p.limit, offset, allowed });
    const tools: DiscoveredTool[] = [];
    for (const hit of found.results) {
      const tool = cat.tools.get(hit.name)?.tool;
      if (tool === undefined) continue;
      tools.push({
        name: hit.name,
        ...(tool.title !== undefined && { title: tool.title }),
        ...(tool.description !== undefined && { description: tool.description }),
        inputSchema: tool.inputSchema,
      });
    }
    const page = fitPage(ex.message.id, tools, (subset, complete) => {
      const next = offset + subset.length;
      return render(subset, complete, next < found.total ? next : -1, found.total);
    });
    if (!page.ok) return { ok: false, error: page.error };
    if (deps.revisionNow() !== ex.snapshot.revision) return { ok: false, error: 'tool_grants_changed' };
    await activate(
      ex,
      tools.slice(0, page.count).map((t) => t.name),
    );
    if (discovery.hasSubscribers) {
      discovery.publish({
        request: ex.request,
        results: page.count,
        total: found.total,
        durationSeconds: (performance.now() - began) / 1000,
      });
    }
    return { ok: true, result: finish(page.result, binding, offset + page.count, found.total, issuedAt) };
  }

  /**
   * Records what the caller was shown. When a tool joins the caller's
   * tools/list, its streams are told, here and, through the relay, on the
   * other replicas. Recording answers what was active before, in the same
   * round trip, so a Redis outage costs one command timeout at most.
   */
  async function activate(ex: Caller, names: readonly string[]): Promise<void> {
    const { revision } = ex.snapshot;
    const principal = ex.principal.id;
    const { listChanged: streams, relay } = deps;
    const listening = relay !== undefined || streams?.watching(principal) === true;
    const before = await activations.activate(revision, principal, names);
    if (!listening || !names.some((n) => !before.has(n) && !alwaysListed(ex.policy, n))) return;
    streams?.notify(principal);
    relay?.publish(principal);
  }

  /** Replaces the placeholder next offset with a signed cursor. */
  function finish(result: unknown, binding: CursorBinding, next: number, total: number, issuedAt: number): unknown {
    const r = result as { nextCursor?: unknown };
    if (r.nextCursor === undefined || next >= total) return result;
    return { ...r, nextCursor: cursors.encode(binding, { offset: next, issuedAt }) };
  }

  return {
    async discover(ex, raw) {
      const p = readDiscoverParams(raw ?? {}, true);
      if (!p.ok) return { ok: false, error: 'invalid_params', data: { errors: p.errors } };
      // The placeholder cursor keeps the measured size honest: a signed cursor has a fixed length.
      return run(ex, p.params, (page, _complete, next, total) => ({
        tools: page,
        total,
        ...(next >= 0 && { nextCursor: 'x'.repeat(CURSOR_PLACEHOLDER_LENGTH) }),
      }));
    },

    async searchTool(ex, args) {
      const p = readDiscoverParams(args ?? {}, false);
      if (!p.ok) return { ok: false, error: 'invalid_arguments', data: { errors: p.errors } };
      return run(ex, p.params, (page, _complete, _next, total) => {
        const structured = { tools: page, total };
        return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
      });
    },

    async deferredList(ex, firstPage) {
      const active = await activations.active(ex.snapshot.revision, ex.principal.id);
      const keep = (name: string) => {
        if (name === SEARCH_TOOL_NAME || !mayList(ex.policy, ex.snapshot, ex.principal, name)) return false;
        return alwaysListed(ex.policy, name) || active.has(name);
      };
      return (result) => keepTools(result, keep, firstPage ? [SEARCH_TOOL] : []);
    },
  };
}

/** Length of an encoded cursor (base64url payload + '.' + base64url HMAC), at most. */
const CURSOR_PLACEHOLDER_LENGTH = 160;
