import type { Stage } from './stage.ts';
import type { Pool } from 'undici';
import type { Principal } from '../../auth/types.ts';
import type { ToolErrors } from '../../config/settings.ts';
import type { Policy } from '../../config/policy/policy.ts';
import { mayListPrompt, mayListResource, mayListTemplate } from '../../grants/surfaces.ts';
import { publishDecision } from '../../telemetry/channels.ts';
import { requestBuffered } from '../../upstream/buffered.ts';
import { forward } from '../../upstream/forward.ts';
import { rewriteResult } from '../../mcp/rewrite.ts';
import { refuse, sendBuffered } from './reply.ts';

interface Listed {
  /** The result member holding the page's entries. */
  readonly member: string;
  /** The entry field a row is matched on. */
  readonly field: string;
  readonly policed: (policy: Policy) => boolean;
  readonly keep: (policy: Policy, principal: Principal, value: string) => boolean;
}

/** The listings filtered per principal, by method. */
export const LISTINGS: ReadonlyMap<string, Listed> = new Map<string, Listed>([
  [
    'resources/list',
    { member: 'resources', field: 'uri', policed: (p) => p.resources !== undefined, keep: mayListResource },
  ],
  [
    'resources/templates/list',
    {
      member: 'resourceTemplates',
      field: 'uriTemplate',
      policed: (p) => p.resources !== undefined,
      keep: mayListTemplate,
    },
  ],
  ['prompts/list', { member: 'prompts', field: 'name', policed: (p) => p.prompts !== undefined, keep: mayListPrompt }],
]);

/**
 * resources/list, resources/templates/list and prompts/list, once the policy
 * polices the surface: forwarded, buffered, and each page rewritten to the
 * entries this caller may read or get, in the upstream's order and with its
 * `nextCursor`, marked `cacheScope: "private"`. An entry without the field
 * it is matched on is dropped. A page toolgate cannot read is never passed on
 * unfiltered. Unpoliced surfaces are forwarded untouched.
 */
export function listingStage(pool: Pool, maxRewriteBytes: number, toolErrors: ToolErrors): Stage {
  return async (ex, res, headers, body) => {
    const listed = LISTINGS.get(ex.message.method ?? '');
    if (listed === undefined || !listed.policed(ex.policy))
      return forward(pool, { req: ex.request, res, headers, body, rpcId: ex.message.id });
    publishDecision({ request: ex.request, stage: 'listing', allowed: true, principal: ex.principal });
    const up = await requestBuffered(pool, ex.request, res, headers, body, maxRewriteBytes);
    if (!up.ok)
      return up.error === 'client_closed' ? 'client_closed' : refuse(res, ex.message, { error: up.error }, toolErrors);
    const contentType = up.headers['content-type'];
    const keep = (entry: unknown) => {
      const value = (entry as Record<string, unknown> | null)?.[listed.field];
      return typeof value === 'string' && listed.keep(ex.policy, ex.principal, value);
    };
    const edit = (result: Record<string, unknown>) => {
      const entries = Array.isArray(result[listed.member]) ? (result[listed.member] as unknown[]) : [];
      return { ...result, [listed.member]: entries.filter(keep), cacheScope: 'private' };
    };
    const rewritten =
      up.status === 200
        ? rewriteResult(typeof contentType === 'string' ? contentType : undefined, up.body, ex.message.id, edit)
        : up.body;
    if (rewritten === undefined) return refuse(res, ex.message, { error: 'upstream_unavailable' }, toolErrors);
    return sendBuffered(res, up.status, up.headers, rewritten);
  };
}
