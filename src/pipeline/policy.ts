import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Pool } from 'undici';
import type { PolicyInForce } from '../auth/policy-in-force.ts';
import type { SessionBindings } from '../auth/session-bindings.ts';
import type { Principal } from '../auth/types.ts';
import type { CatalogueView } from '../catalogue/view.ts';
import type { Policy } from '../config/policy/policy.ts';
import type { Settings } from '../config/settings.ts';
import type { SchemaCache } from '../validation/cache.ts';
import { listChangedEvent, listensForToolChanges, type ListChangedStreams } from '../discovery/list-changed.ts';
import { DISCOVER_METHOD } from '../discovery/search-tool.ts';
import type { DiscoveryService } from '../discovery/service.ts';
import { emptySnapshot } from '../grants/snapshot.ts';
import type { GrantStore } from '../grants/store.ts';
import type { GrantSnapshot } from '../grants/types.ts';
import type { Exchange, Verdict } from '../interceptors/contract.ts';
import type { Classified } from '../mcp/classify.ts';
import { withoutContinuation } from '../approval/request-state.ts';
import { sendError } from '../mcp/jsonrpc.ts';
import { methodLabel } from '../mcp/methods.ts';
import { underPrefix } from '../mcp/target.ts';
import { forward, type EventStreamHook } from '../upstream/forward.ts';
import type { Chain } from './compose.ts';
import type { Outcome } from './outcome.ts';
import type { RequestPath } from './request-path.ts';
import { authenticator, type Authenticated } from './stages/authenticate.ts';
import { discoveryStage, isDiscovery } from './stages/discovery.ts';
import { executeStage, type ExecuteDeps } from './stages/execute.ts';
import { passThrough } from './stages/pass-through.ts';
import { readMessage } from './stages/read-message.ts';
import { answer, refuse, refuseCall } from './stages/reply.ts';
import { refusedRepeatedFields } from './stages/repeated-fields.ts';
import { sessionGuard } from './stages/session.ts';
import { LISTINGS, listingStage } from './stages/listings.ts';
import { resourceUpdateDropper } from './stages/resource-updates.ts';
import { SURFACE_METHODS, surfaceStage } from './stages/surfaces.ts';
import type { Stage } from './stages/stage.ts';
import { TASK_METHODS, tasksStage } from './stages/tasks.ts';
import { grantSnapshot } from './stages/snapshot.ts';
import { toolsListStage } from './stages/tools-list.ts';
import { upstreamHeaders } from './stages/upstream-headers.ts';

export interface PolicyPathDeps {
  readonly settings: Pick<Settings, 'maxBodyBytes' | 'passthroughPaths' | 'toolErrors' | 'principalHeader'>;
  readonly pool: Pool;
  /** The policy in force and its verifiers; read once per request. */
  readonly current: () => PolicyInForce;
  readonly catalogue: CatalogueView;
  readonly chain: Chain;
  /** What toolgate checks before answering discovery itself. */
  readonly discoveryChain: Chain;
  readonly grants: GrantStore;
  readonly sessions: SessionBindings;
  /** Largest upstream tools/list response toolgate will buffer to filter. */
  readonly maxRewriteBytes: number;
  /** Present when deferred tool listing is on: discovery answers its two doors locally. */
  readonly discovery?: DiscoveryService | undefined;
  /** Open notification streams by principal, told when grants or discovery change a caller's tools/list. */
  readonly listChanged?: ListChangedStreams | undefined;
  /** Whether a tool object from the upstream's live list may be shown at all (contract pinning). */
  readonly mayList?: ((tool: Readonly<Record<string, unknown>>) => boolean) | undefined;
  /** How allowed tools/call requests run: deadline, idempotency, breaker, retries. */
  readonly execution: ExecuteDeps;
  /** Compiled tool schemas per policy version: the result guard checks edited structuredContent against outputSchema. */
  readonly schemas: (policy: Policy) => SchemaCache;
}

/** The notification as a 2025 session's GET stream carries it. */
const SESSION_EVENT = listChangedEvent();
const LISTEN_METHOD = 'subscriptions/listen';

/**
 * Policy mode, in request order: refuse repeated MCP headers → authenticate
 * (before the body is read) → read and classify → session ownership → route:
 * toolgate's own plumbing (listen streams, initialize) is forwarded with its
 * hooks; a policed method takes the grant snapshot and goes to the tools/list
 * rewrite, the local discovery answer, or the interceptor chain → forward.
 */
export function policyPath(deps: PolicyPathDeps): RequestPath {
  const { settings, pool, current, catalogue, grants, listChanged } = deps;
  const authenticate = authenticator(current);
  const session = sessionGuard(deps.sessions);
  const headers = upstreamHeaders(settings, true);
  const pass = passThrough(pool, settings.maxBodyBytes);
  const snapshot = grantSnapshot(grants);
  const toolsList = toolsListStage({
    pool,
    catalogue,
    maxRewriteBytes: deps.maxRewriteBytes,
    discovery: deps.discovery,
    mayList: deps.mayList,
    toolErrors: settings.toolErrors,
  });
  const discovery =
    deps.discovery === undefined ? undefined : discoveryStage(deps.discovery, deps.discoveryChain, settings.toolErrors);
  const results = { schemas: deps.schemas, toolErrors: settings.toolErrors };
  const execute = executeStage(deps.execution, settings.toolErrors, results);
  const surfaces = surfaceStage(pool, deps.chain, settings.toolErrors);
  const listings = listingStage(pool, deps.maxRewriteBytes, settings.toolErrors);
  const tasks = tasksStage({
    pool,
    tasks: deps.execution.tasks,
    snapshot,
    maxRewriteBytes: deps.maxRewriteBytes,
    toolErrors: settings.toolErrors,
    results,
  });
  // Methods whose rules live in the policy, not the grant store: they never wait on it (tasks ask it only for their creator).
  const policyOnly = new Map<string, Stage>([
    ...SURFACE_METHODS.map((m) => [m, surfaces] as const),
    ...[...LISTINGS.keys()].map((m) => [m, listings] as const),
    ...TASK_METHODS.map((m) => [m, tasks] as const),
  ]);
  const policed = new Set([
    'tools/call',
    'tools/list',
    ...policyOnly.keys(),
    ...(discovery === undefined ? [] : [DISCOVER_METHOD]),
  ]);
  const rowsForTool = (tool: string) => grants.rowsForTool(tool);
  const passthroughPaths = settings.passthroughPaths;

  /** An exchange decided by policy rows alone: it carries no tool grants. */
  const policyExchange = (
    req: IncomingMessage,
    message: Classified,
    principal: Principal,
    policy: PolicyInForce['policy'],
  ): Exchange => ({
    request: req,
    message,
    principal,
    policy,
    snapshot: emptySnapshot(principal.id),
    catalogue,
    rowsForTool,
  });

  /**
   * Where a classified message goes. Synchronous up to the first step that
   * must wait (a grant lookup, an external validator, the upstream), so the
   * common call adds no promise of its own on the way to the upstream.
   */
  function route(
    req: IncomingMessage,
    res: ServerResponse,
    upstream: string[],
    body: Buffer,
    message: Classified,
    principal: Principal,
  ): Outcome | Promise<Outcome> {
    const method = message.method;
    if (method === LISTEN_METHOD && message.kind === 'request')
      return listen(req, res, upstream, body, message, principal);
    if (method === 'initialize' && message.kind === 'request') {
      return forward(
        pool,
        { req, res, headers: upstream, body, rpcId: message.id },
        { onResponseHead: session.bindOnInitialize(principal, message) },
      );
    }
    if (message.kind === 'notification' && method !== undefined && policed.has(method)) {
      // A request method without an id: a generic JSON-RPC server runs such
      // a notification all the same, and it would have passed unchecked.
      sendError(res, null, 'invalid_request');
      return 'invalid_request';
    }
    if (message.kind !== 'request' || method === undefined || !policed.has(method)) {
      return forward(pool, { req, res, headers: upstream, body, rpcId: message.id });
    }
    const inForce = current();
    const local = policyOnly.get(method);
    if (local !== undefined) return local(policyExchange(req, message, principal, inForce.policy), res, upstream, body);
    const held = snapshot(req, principal);
    return held instanceof Promise
      ? held.then((snap) => withGrants(req, res, upstream, body, message, principal, inForce, snap))
      : withGrants(req, res, upstream, body, message, principal, inForce, held);
  }

  /** A policed method once the caller's grants are known: the tools/list rewrite, discovery, or a tools/call. */
  function withGrants(
    req: IncomingMessage,
    res: ServerResponse,
    upstream: string[],
    body: Buffer,
    message: Classified,
    principal: Principal,
    inForce: PolicyInForce,
    snap: GrantSnapshot | undefined,
  ): Outcome | Promise<Outcome> {
    if (snap === undefined) return refuse(res, message, { error: 'grants_unavailable' }, settings.toolErrors);
    const ex: Exchange = {
      request: req,
      message,
      principal,
      policy: inForce.policy,
      snapshot: snap,
      catalogue,
      rowsForTool,
      urlElicitation: session.urlElicitation(req, message),
    };
    if (message.method === 'tools/list') return toolsList(ex, res, upstream, body);
    if (discovery !== undefined && isDiscovery(ex)) return discovery(ex, res, upstream, body);
    const deciding = deps.chain.run(ex);
    return deciding instanceof Promise
      ? deciding.then((verdict) => call(ex, res, upstream, body, verdict))
      : call(ex, res, upstream, body, deciding);
  }

  /** A tools/call the chain decided: refused, answered by toolgate, or run without its approval continuation (the upstream gets the original call). */
  function call(
    ex: Exchange,
    res: ServerResponse,
    upstream: string[],
    body: Buffer,
    verdict: Verdict,
  ): Outcome | Promise<Outcome> {
    if (verdict.kind === 'deny') return refuseCall(ex, res, verdict, settings.toolErrors);
    if (verdict.kind === 'respond') return answer(res, ex.message, verdict.result);
    return execute(ex, res, upstream, withoutContinuation(ex.message.params, body));
  }

  /** A 2026-07-28 listen stream, checked against the policy's subscription rules. */
  async function listen(
    req: IncomingMessage,
    res: ServerResponse,
    upstream: string[],
    body: Buffer,
    message: Classified,
    principal: Principal,
  ): Promise<Outcome> {
    const subscriptions = await deps.chain.run(policyExchange(req, message, principal, current().policy));
    if (subscriptions.kind === 'deny') return refuse(res, message, subscriptions, settings.toolErrors);
    // 2026-07-28 has no GET stream: list changes go on the caller's listen stream, stamped with its subscription.
    const onEventStream =
      listChanged !== undefined && listensForToolChanges(message.params)
        ? tellOnChange(listChanged, principal, listChangedEvent(message.id))
        : undefined;
    return forward(
      pool,
      { req, res, headers: upstream, body, rpcId: message.id },
      { onEventStream, dropEvent: resourceUpdateDropper(current, principal) },
    );
  }

  return {
    async message(req, res) {
      if (refusedRepeatedFields(req, res)) return { label: 'unclassified', outcome: 'header_mismatch' };
      const pending = authenticate(req);
      const who = pending instanceof Promise ? await pending : pending;
      if (!who.ok) return { label: 'unclassified', outcome: unauthenticated(res, who) };
      const read = await readMessage(req, res, settings.maxBodyBytes);
      if (!read.ok) return { label: 'unclassified', outcome: read.outcome };
      const { message, body } = read;
      const label = methodLabel(message.method);
      if (!session.owns(req, who.principal)) {
        sendError(res, message.id, 'session_not_found');
        return { label, outcome: 'session_not_found' };
      }
      const routed = route(req, res, headers.message(req, message, who.principal), body, message, who.principal);
      return { label, outcome: routed instanceof Promise ? await routed : routed };
    },

    async sessionOperation(req, res) {
      const label = `http_${req.method?.toLowerCase()}`;
      if (refusedRepeatedFields(req, res)) return { label, outcome: 'header_mismatch' };
      // CORS preflights carry no credentials by design.
      if (req.method === 'OPTIONS')
        return { label, outcome: await pass(req, res, null, headers.plain(req, undefined)) };
      const who = await authenticate(req);
      if (!who.ok) return { label, outcome: unauthenticated(res, who) };
      if (!session.owns(req, who.principal)) {
        sendError(res, null, 'session_not_found');
        return { label, outcome: 'session_not_found' };
      }
      // The GET stream is where a 2025 session's server-initiated messages go.
      const onEventStream =
        req.method === 'GET' && listChanged !== undefined
          ? tellOnChange(listChanged, who.principal, SESSION_EVENT)
          : undefined;
      const dropEvent = req.method === 'GET' ? resourceUpdateDropper(current, who.principal) : undefined;
      const options = { onEventStream, onResponseHead: session.endOnDelete(req), dropEvent };
      return { label, outcome: await pass(req, res, null, headers.plain(req, who.principal), options) };
    },

    async otherPath(req, res, path) {
      // Only the listed prefixes (OAuth metadata and the like, reachable
      // without a credential by design) bypass the checks.
      if (!passthroughPaths.some((prefix) => underPrefix(path, prefix))) {
        sendError(res, null, 'not_found');
        return { label: 'http', outcome: 'not_found' };
      }
      return { label: 'passthrough', outcome: await pass(req, res, null, headers.unverified(req)) };
    },
  };
}

/** Registers a caller's event stream to receive `event` whenever its tools/list changes for toolgate's reasons. */
function tellOnChange(streams: ListChangedStreams, principal: Principal, event: Buffer): EventStreamHook {
  return (injector) => streams.open(principal.id, () => injector.send(event));
}

/** 401 with the challenge (and why, where the verifier said), or a retryable 503 when a credential could not be checked now. */
function unauthenticated(res: ServerResponse, who: Exclude<Authenticated, { ok: true }>): Outcome {
  if (who.error === 'unauthenticated') {
    sendError(res, null, who.error, who.problem === undefined ? undefined : { reason: who.problem }, {
      'www-authenticate': who.challenge,
    });
  } else {
    sendError(res, null, who.error);
  }
  return who.error;
}
