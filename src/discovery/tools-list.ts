import type { Principal } from '../auth/types.ts';
import { isRecord } from '../json/record.ts';
import type { Policy } from '../config/policy/policy.ts';
import type { GrantSnapshot } from '../grants/types.ts';
import type { GrantRow } from '../config/policy/grant-row.ts';
import { canStepUp } from '../auth/strength.ts';
import { mayList, notGranted, scopesThatWouldHelp } from '../grants/visibility.ts';
import type { CatalogueView } from '../catalogue/view.ts';
import type { Refusal } from '../mcp/jsonrpc.ts';
import type { ResultEdit } from '../mcp/rewrite.ts';

export interface Viewer {
  readonly policy: Policy;
  readonly snapshot: GrantSnapshot;
  readonly principal: Principal;
  rowsForTool(tool: string): Promise<readonly GrantRow[] | undefined>;
}

/**
 * A tools/list page keeps only the tools this principal may call (with a
 * credential that can meet their security level), in the
 * upstream's order and with the upstream's `nextCursor`; schemas are served
 * exactly as the upstream wrote them. The list depends on the caller, so it
 * is marked `cacheScope: "private"`.
 */
export function toolsListEdit(viewer: Viewer): ResultEdit {
  return (result) => keepTools(result, (name) => mayList(viewer.policy, viewer.snapshot, viewer.principal, name));
}

/**
 * The page with only the tools whose name `keep` accepts (in the upstream's
 * order, everything else in the result as it was), `appended` after them,
 * marked private to the caller.
 */
export function keepTools(
  result: Record<string, unknown>,
  keep: (name: string) => boolean,
  appended: readonly unknown[] = [],
): Record<string, unknown> {
  const tools = Array.isArray(result.tools) ? result.tools : [];
  const visible = tools.filter((t: unknown) => {
    const name = (t as { name?: unknown } | null)?.name;
    return typeof name === 'string' && keep(name);
  });
  return { ...result, tools: [...visible, ...appended], cacheScope: 'private' };
}

/** The tools/list result of a caller who may list no tool: empty, and private to it. */
export const EMPTY_LISTING: Readonly<Record<string, unknown>> = Object.freeze({
  tools: Object.freeze([]),
  cacheScope: 'private',
});

/** filter: list and filter as usual; empty: answer EMPTY_LISTING; refuse: the step-up answer. */
export type Listing =
  | { readonly kind: 'filter' }
  | { readonly kind: 'empty' }
  | { readonly kind: 'refuse'; readonly refusal: Refusal };

const FILTER: Listing = Object.freeze({ kind: 'filter' });
const EMPTY: Listing = Object.freeze({ kind: 'empty' });

/**
 * The edit with the tools `listable` refuses dropped first (quarantined
 * contracts), judged on the tool objects as the upstream listed them.
 */
export function hideUnlisted(
  edit: ResultEdit,
  listable: ((tool: Readonly<Record<string, unknown>>) => boolean) | undefined,
): ResultEdit {
  if (listable === undefined) return edit;
  return (result) => {
    const tools = Array.isArray(result.tools) ? result.tools : [];
    return edit({
      ...result,
      tools: tools.filter((t: unknown) => isRecord(t) && typeof t.name === 'string' && listable(t)),
    });
  };
}

/**
 * What a caller who may list no tool of the catalogue gets instead of the
 * upstream's list; `filter` when it may list some (or the catalogue is not
 * known yet). An empty list is the honest
 * answer, except where the spec's step-up can help: an OAuth/JWT bearer
 * caller for whom some scopes would grant tools gets 403 no_tool_granted
 * with an insufficient_scope challenge naming them. A static key cannot gain
 * scopes, so it always gets the empty list. No tool is named.
 */
export async function emptyListing(viewer: Viewer, catalogue: CatalogueView): Promise<Listing> {
  const names = [...catalogue.names()];
  if (names.length === 0) return FILTER;
  for (const name of names) if (mayList(viewer.policy, viewer.snapshot, viewer.principal, name)) return FILTER;
  if (!canStepUp(viewer.principal.credentialStrength)) return EMPTY;
  let help: string[] | undefined;
  const rows = await Promise.all(names.map((name) => viewer.rowsForTool(name)));
  names.forEach((name, i) => {
    const scopes = scopesThatWouldHelp(viewer.policy, viewer.snapshot, viewer.principal, name, rows[i]);
    if (
      scopes !== undefined &&
      (help === undefined ||
        scopes.length < help.length ||
        (scopes.length === help.length && scopes.join(' ') < help.join(' ')))
    ) {
      help = scopes;
    }
  });
  return help === undefined ? EMPTY : { kind: 'refuse', refusal: notGranted(viewer.policy, help, 'no_tool_granted') };
}
