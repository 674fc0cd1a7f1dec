import type { IncomingMessage } from 'node:http';
import type { Stage } from './stage.ts';
import type { Pool } from 'undici';
import type { CatalogueView } from '../../catalogue/view.ts';
import type { DiscoveryService } from '../../discovery/service.ts';
import { EMPTY_LISTING, emptyListing, hideUnlisted, toolsListEdit } from '../../discovery/tools-list.ts';
import { publishDecision } from '../../telemetry/channels.ts';
import { requestBuffered } from '../../upstream/buffered.ts';
import { rewriteResult } from '../../mcp/rewrite.ts';
import type { ToolErrors } from '../../config/settings.ts';
import { answer, refuse, sendBuffered } from './reply.ts';

export interface ToolsListDeps {
  readonly pool: Pool;
  readonly catalogue: CatalogueView;
  /** Largest upstream tools/list response toolgate will buffer to filter. */
  readonly maxRewriteBytes: number;
  /** Present when deferred tool listing is on: it decides what the first page carries. */
  readonly discovery?: DiscoveryService | undefined;
  /** Whether a tool object from the upstream's live list may be shown at all (contract pinning); all when absent. */
  readonly mayList?: ((tool: Readonly<Record<string, unknown>>) => boolean) | undefined;
  readonly toolErrors: ToolErrors;
}

/**
 * tools/list is forwarded, buffered, and rewritten to what this caller may
 * call. A list toolgate cannot read is never passed on unfiltered. A caller
 * who may list nothing is answered here (see emptyListing).
 */
export function toolsListStage(deps: ToolsListDeps): Stage {
  const { pool, catalogue, maxRewriteBytes, discovery, mayList, toolErrors } = deps;
  return async (ex, res, headers, body) => {
    const req: IncomingMessage = ex.request;
    const listing = await emptyListing(ex, catalogue);
    const refused = listing.kind === 'refuse' ? listing.refusal : undefined;
    publishDecision({
      request: req,
      stage: 'tools_list',
      allowed: refused === undefined,
      principal: ex.principal,
      ...(refused !== undefined && { error: refused.error }),
    });
    if (refused !== undefined) return refuse(res, ex.message, refused, toolErrors);
    if (listing.kind === 'empty') return answer(res, ex.message, EMPTY_LISTING);
    const up = await requestBuffered(pool, req, res, headers, body, maxRewriteBytes);
    if (!up.ok) {
      if (up.error === 'client_closed') return 'client_closed';
      return refuse(res, ex.message, { error: up.error }, toolErrors);
    }
    const contentType = up.headers['content-type'];
    const firstPage = (ex.message.params as { cursor?: unknown } | undefined)?.cursor === undefined;
    const edit = hideUnlisted(
      discovery === undefined ? toolsListEdit(ex) : await discovery.deferredList(ex, firstPage),
      mayList,
    );
    const rewritten =
      up.status === 200
        ? rewriteResult(typeof contentType === 'string' ? contentType : undefined, up.body, ex.message.id, edit)
        : up.body;
    if (rewritten === undefined) {
      return refuse(res, ex.message, { error: 'upstream_unavailable' }, toolErrors);
    }
    return sendBuffered(res, up.status, up.headers, rewritten);
  };
}
