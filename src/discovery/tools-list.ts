import type { Principal } from '../auth/types.ts';
import { isRecord } from '../json/record.ts';
import type { Policy } from '../config/policy/policy.ts';
import type { GrantSnapshot } from '../grants/types.ts';
import type { GrantRow } from '../config/policy/grant-row.ts';
import { mayList, notGranted, scopesThatWouldHelp } from '../grants/visibility.ts';
import type { CatalogueView } from '../catalogue/view.ts';
import type { Refusal } from '../mcp/jsonrpc.ts';
import type { ResultEdit } from '../upstream/rewrite.ts';

export interface Viewer {
  readonly policy: Policy;
  readonly snapshot: GrantSnapshot;
  readonly principal: Principal;
  rowsForTool(tool: string): Promise<readonly GrantRow[] | undefined>;
}

/**
 * A tools/list page keeps only the tools this principal may call, in the
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
export function keepTools(result: Record<string, unknown>, keep: (name: string) => boolean, appended: readonly unknown[] = []): Record<string, unknown> {
  const tools = Array.isArray(result.tools) ? result.tools : [];
  const visible = tools.filter((t: unknown) => {
    const name = (t as { name?: unknown } | null)?.name;
    return typeof name === 'string' && keep(name);
  });
  return { ...result, tools: [...visible, ...appended], cacheScope: 'private' };
}

/**
 * The edit with the tools `mayList` refuses dropped first (quarantined
 * contracts), judged on the tool objects as the upstream listed them.
 */
export function hideUnlisted(edit: ResultEdit, mayList: ((tool: Readonly<Record<string, unknown>>) => boolean) | undefined): ResultEdit {
  if (mayList === undefined) return edit;
  return (result) => {
    const tools = Array.isArray(result.tools) ? result.tools : [];
    return edit({ ...result, tools: tools.filter((t: unknown) => isRecord(t) && typeof t.name === 'string' && mayList(t)) });
  };
}

/**
 * An agent that receives an empty list concludes nothing exists and never
 * asks for more access; when the caller may see no tool of the catalogue at
 * all, it gets a 403 naming scopes that would grant some, instead.
 */
export async function refuseEmptyListing(viewer: Viewer, catalogue: CatalogueView): Promise<Refusal | undefined> {
  const names = [...catalogue.names()];
  if (names.length === 0) return undefined;
  for (const name of names) if (mayList(viewer.policy, viewer.snapshot, viewer.principal, name)) return undefined;
  let help: string[] | undefined;
  const rows = await Promise.all(names.map((name) => viewer.rowsForTool(name)));
  names.forEach((name, i) => {
    const scopes = scopesThatWouldHelp(viewer.policy, viewer.snapshot, viewer.principal, name, rows[i]);
    if (scopes !== undefined && (help === undefined || scopes.length < help.length || (scopes.length === help.length && scopes.join(' ') < help.join(' ')))) {
      help = scopes;
    }
  });
  return notGranted(viewer.policy, help);
}
