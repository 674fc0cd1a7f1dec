/**
 * Grant decisions for resources and prompts: pure functions over the
 * policy's `resources` and `prompts` rows, under the rules of grants/rules.ts
 * (an exact principal row overrides the `*` rows, deny wins at a level, an
 * audit-mode row never loosens what is enforced, what no row allows is
 * denied). A surface the policy has no section for is not policed: every
 * function here then allows.
 *
 * A resource row matches by URI, exactly or by prefix (mcp/resource-uri.ts).
 * Every matching row takes part, so a deny on a prefix wins over an allow on
 * a longer one at the same level: an allow list carved out of a deny needs
 * the exact-principal level, never a longer `*` row.
 */
import type { Principal } from '../auth/types.ts';
import {
  compileCondition,
  conditionBindings,
  type ConditionBindings,
  type ConditionSurface,
} from '../config/policy/conditions.ts';
import type { Enforcement, GrantRow } from '../config/policy/grant-row.ts';
import type { Policy } from '../config/policy/policy.ts';
import type { PromptRow, ResourceRow, Surface } from '../config/policy/surface-row.ts';
import { templatePrefix, underUriPrefix, uriProblem } from '../mcp/resource-uri.ts';
import { applies, decideMatching, decideRows } from './rules.ts';
import type { Decision } from './types.ts';

/** What one read or get is decided on, besides the principal. */
export interface SurfaceRequest {
  readonly protocolVersion: string | undefined;
  readonly timeMs: number;
  /** A prompts/get's arguments, for conditions reading `prompt.arguments`. */
  readonly arguments?: unknown;
}

export interface SurfaceDecision {
  readonly decision: Decision;
  /** The refusal was decided by conditions that could not be evaluated. */
  readonly failed: boolean;
  /** The refusal is only recorded: the deciding rows or the surface are in audit mode. */
  readonly audit: boolean;
  /** The rows that decided: `decision.rows`, or when no row held, the conditional rows that did not. */
  readonly deciding: readonly GrantRow[];
}

/** A row with the view grants/rules.ts reads, and the surface row it came from. */
interface Indexed<R> {
  readonly rule: GrantRow;
  readonly row: R;
}

const views = new WeakMap<object, readonly Indexed<ResourceRow | PromptRow>[]>();

function indexed<R extends ResourceRow | PromptRow>(surface: Surface<R>): readonly Indexed<R>[] {
  let out = views.get(surface);
  if (out === undefined) {
    out = surface.grants.map((row) => ({
      row,
      rule: Object.freeze({
        principal: row.principal,
        tool: 'uri' in row ? row.uri : row.prompt,
        scopes: row.scopes,
        effect: row.effect,
        name: row.name,
        ...(row.when !== undefined && { when: row.when }),
        ...(row.enforcement !== undefined && { enforcement: row.enforcement }),
      }),
    }));
    views.set(surface, out);
  }
  return out as readonly Indexed<R>[];
}

function candidates<R extends ResourceRow | PromptRow>(
  surface: Surface<R>,
  principal: Principal,
  matches: (row: R) => boolean,
): Indexed<R>[] {
  return indexed(surface).filter((r) => applies(r.rule, principal.id, principal.scopes) && matches(r.row));
}

/**
 * The decision for one call, its conditions evaluated: a row whose condition
 * holds takes part, one whose condition fails to evaluate takes part only if
 * it denies (it never allows), and a refusal decided by such rows alone is
 * `failed`.
 */
function decideOne<R extends ResourceRow | PromptRow>(
  policy: Policy,
  surface: Surface<R>,
  matched: readonly Indexed<R>[],
  surfaceName: ConditionSurface,
  bind: () => ConditionBindings,
): SurfaceDecision {
  let bindings: ConditionBindings | undefined;
  const unreadable = new Set<GrantRow>();
  const holding = matched
    .filter(({ rule }) => {
      if (rule.when === undefined) return true;
      const compiled = compileCondition(rule.when, surfaceName);
      const held = compiled.ok ? compiled.condition.evaluate((bindings ??= bind())) : undefined;
      if (held === undefined) unreadable.add(rule);
      return held === true || (held === undefined && rule.effect === 'deny');
    })
    .map((r) => r.rule);
  const decision = decideMatching(
    holding,
    matched.map((r) => r.rule),
  );
  const failed =
    decision.effect === 'deny' &&
    (decision.rows.length === 0 ? unreadable.size > 0 : decision.rows.every((r) => unreadable.has(r)));
  const deciding =
    decision.rows.length > 0 ? decision.rows : matched.map((r) => r.rule).filter((r) => r.when !== undefined);
  return {
    decision,
    failed,
    deciding,
    audit: decision.effect === 'deny' && (decision.audit === true || surfaceEnforcement(policy, surface) === 'audit'),
  };
}

function surfaceEnforcement(policy: Policy, surface: Surface<unknown>): Enforcement {
  return surface.enforcement ?? policy.enforcement;
}

/** Whether `uri` is what a resource row names. */
function rowMatches(row: ResourceRow, uri: string): boolean {
  return row.match === 'exact' ? uri === row.uri : underUriPrefix(uri, row.uri);
}

/** The decision for a resources/read (or resources/subscribe) of one URI in normal form; undefined when resources are not policed. */
export function resourceDecision(
  policy: Policy,
  principal: Principal,
  uri: string,
  request: SurfaceRequest,
): SurfaceDecision | undefined {
  const surface = policy.resources;
  if (surface === undefined) return undefined;
  const matched = candidates(surface, principal, (row) => rowMatches(row, uri));
  return decideOne(policy, surface, matched, 'resource', () =>
    conditionBindings({ principal, resource: { uri }, request }),
  );
}

/** The decision for a prompts/get; undefined when prompts are not policed. */
export function promptDecision(
  policy: Policy,
  principal: Principal,
  name: string,
  request: SurfaceRequest,
): SurfaceDecision | undefined {
  const surface = policy.prompts;
  if (surface === undefined) return undefined;
  const matched = candidates(surface, principal, (row) => row.prompt === name);
  return decideOne(policy, surface, matched, 'prompt', () =>
    conditionBindings({ principal, prompt: { name, arguments: request.arguments }, request }),
  );
}

/**
 * Whether a listing shows this: some call could be allowed (conditions taken
 * at their best case, as tools/list takes them), or its refusal would only
 * be recorded, so a shadow rollout does not change what clients see.
 */
function listable<R extends ResourceRow | PromptRow>(
  policy: Policy,
  surface: Surface<R>,
  matched: readonly Indexed<R>[],
): boolean {
  if (surfaceEnforcement(policy, surface) === 'audit') return true;
  const d = decideRows(matched.map((r) => r.rule));
  return d.effect === 'allow' || d.audit === true;
}

/**
 * Whether a resources/list entry with this URI is shown to the principal:
 * everything a resource condition reads is known at listing, so the entry
 * is decided as a read of it would be. A URI outside the normal form could
 * never be read through toolgate, so it is not shown.
 */
export function mayListResource(policy: Policy, principal: Principal, uri: string): boolean {
  if (policy.resources === undefined) return true;
  if (uriProblem(uri) !== undefined) return false;
  const d = resourceDecision(policy, principal, uri, { protocolVersion: undefined, timeMs: Date.now() });
  return d === undefined || d.decision.effect === 'allow' || d.audit;
}

/**
 * Whether a URI template (resources/templates/list, or the resource a
 * completion/complete names) could expand to a URI the principal may read.
 * Every expansion starts with the template's literal prefix: an allow row
 * counts when some expansion could match it, a deny row only when every
 * expansion does.
 */
export function mayListTemplate(policy: Policy, principal: Principal, template: string): boolean {
  const surface = policy.resources;
  if (surface === undefined) return true;
  const literal = templatePrefix(template);
  const whole = literal === template;
  const matched = candidates(surface, principal, (row) =>
    row.effect === 'allow' ? couldMatch(row, literal, whole) : matchesAll(row, literal, whole),
  );
  return listable(policy, surface, matched);
}

function couldMatch(row: ResourceRow, literal: string, whole: boolean): boolean {
  if (whole) return rowMatches(row, literal);
  return row.uri.startsWith(literal) || (row.match === 'prefix' && literal.startsWith(row.uri));
}

function matchesAll(row: ResourceRow, literal: string, whole: boolean): boolean {
  if (whole) return rowMatches(row, literal);
  if (row.match === 'exact' || !literal.startsWith(row.uri)) return false;
  // An expansion may go on right after the prefix with no boundary: only a `/`-ended prefix, or a boundary already in the literal, covers it.
  return row.uri.endsWith('/') || (literal.length > row.uri.length && underUriPrefix(literal, row.uri));
}

/** Whether a prompts/list entry is shown to the principal. */
export function mayListPrompt(policy: Policy, principal: Principal, name: string): boolean {
  const surface = policy.prompts;
  return (
    surface === undefined ||
    listable(
      policy,
      surface,
      candidates(surface, principal, (row) => row.prompt === name),
    )
  );
}
