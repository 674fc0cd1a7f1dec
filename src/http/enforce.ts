import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'undici';
import { unauthorizedChallenge } from '../auth/challenge.ts';
import { authenticate } from '../auth/chain.ts';
import type { SessionBindings } from '../auth/session-bindings.ts';
import type { Principal } from '../auth/types.ts';
import type { Enforcement } from '../config/enforcement.ts';
import { toolMetadata } from '../config/policy.ts';
import { DISCOVER_METHOD, SEARCH_TOOL_NAME } from '../discovery/search-tool.ts';
import { listChangedEvent, listensForToolChanges, type ListChangedStreams } from '../discovery/list-changed.ts';
import type { DiscoveryService, DoorResult } from '../discovery/service.ts';
import { hideUnlisted, refuseEmptyListing, toolsListEdit } from '../discovery/tools-list.ts';
import type { GrantStore } from '../grants/store.ts';
import type { CatalogueView } from '../pipeline/catalogue-view.ts';
import type { Chain } from '../pipeline/compose.ts';
import type { Exchange, Verdict } from '../pipeline/types.ts';
import { requestBuffered } from '../upstream/buffered.ts';
import { decision } from '../telemetry/channels.ts';
import { snapshotLookup } from '../telemetry/hooks.ts';
import { forward, type EventStreamHook, type ResponseHeadHook } from '../upstream/forward.ts';
import { rewriteResult } from '../upstream/rewrite.ts';
import type { Classified } from './classify.ts';
import { clientResponseHeaders } from './headers.ts';
import { sendError } from './jsonrpc.ts';
import { isRecord } from '../json/record.ts';
import type { Outcome } from './traffic.ts';

const SESSION_HEADER = 'mcp-session-id';

/** The notification as a 2025 session's GET stream carries it. */
const SESSION_EVENT = listChangedEvent();
const LISTEN_METHOD = 'subscriptions/listen';

/** Registers a caller's event stream to receive `event` whenever its tools/list changes for toolgate's reasons. */
function tellOnChange(streams: ListChangedStreams, principal: Principal, event: Buffer): EventStreamHook {
  return (injector) => streams.open(principal.id, () => injector.send(event));
}

export type Authenticated = { readonly ok: true; readonly principal: Principal } | { readonly ok: false; readonly challenge: string };

export interface Enforcer {
  authenticate(req: IncomingMessage): Promise<Authenticated>;
  /** Whether the request's Mcp-Session-Id, if it has one, was opened by this principal. */
  ownsSession(req: IncomingMessage, principal: Principal): boolean;
  /** For a DELETE of an owned session: what forgets the binding once the upstream has ended the session. */
  sessionEnd(req: IncomingMessage): ResponseHeadHook | undefined;
  /** What registers this caller's GET event streams for toolgate's own notifications; undefined when it sends none. */
  eventStreamHook(principal: Principal): EventStreamHook | undefined;
  /** Decides a classified POST: answers a refusal itself, or forwards. */
  handle(req: IncomingMessage, res: ServerResponse, headers: string[], body: Buffer, message: Classified, principal: Principal): Promise<Outcome>;
}

export interface EnforcerDeps {
  /** The enforcement in force; read once per request. */
  readonly current: () => Enforcement;
  readonly catalogue: CatalogueView;
  readonly chain: Chain;
  /** What toolgate checks before answering discovery itself. */
  readonly discoveryChain: Chain;
  readonly grants: GrantStore;
  readonly pool: Pool;
  /** Largest upstream tools/list response toolgate will buffer to filter. */
  readonly maxRewriteBytes: number;
  /** Present when deferred tool listing is on: discovery answers its two doors locally. */
  readonly discovery?: DiscoveryService | undefined;
  /** Open notification streams by principal, told when grants or discovery change a caller's tools/list. */
  readonly listChanged?: ListChangedStreams | undefined;
  readonly sessions: SessionBindings;
  /** Whether a tool object from the upstream's live list may be shown at all (contract pinning); all when absent. */
  readonly mayList?: ((tool: Readonly<Record<string, unknown>>) => boolean) | undefined;
}

/** Policy on the request path: who is calling, and what they may see and call. */
export function createEnforcer(deps: EnforcerDeps): Enforcer {
  const { current, catalogue, chain, discoveryChain, grants, pool, maxRewriteBytes, discovery: discover, listChanged, sessions } = deps;
  const rowsForTool = (tool: string) => grants.rowsForTool(tool);
  const policed = new Set(['tools/call', 'tools/list', ...(discover === undefined ? [] : [DISCOVER_METHOD])]);

  // The id an initialize answer carries becomes this principal's alone.
  const bindSession = (status: number, head: Record<string, string | string[] | undefined>, principal: Principal) => {
    const id = head[SESSION_HEADER];
    if (status >= 200 && status < 300 && typeof id === 'string') sessions.bind(id, principal.id);
  };

  const answer = (res: ServerResponse, message: Classified, r: DoorResult): Outcome => {
    if (!r.ok) {
      sendError(res, message.id, r.error, r.data);
      return r.error;
    }
    // 2026-07-28 results carry resultType, and its clients refuse one without it.
    const result = message.era === 'modern' && isRecord(r.result) && !Object.hasOwn(r.result, 'resultType') ? { ...r.result, resultType: 'complete' } : r.result;
    const text = JSON.stringify({ jsonrpc: '2.0', id: message.id, result });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    return 'answered';
  };

  const refuse = (res: ServerResponse, message: Classified, v: Extract<Verdict, { kind: 'deny' }>): Outcome => {
    sendError(res, message.id, v.error, v.data, v.headers as Record<string, string> | undefined);
    return v.error;
  };

  async function toolsList(req: IncomingMessage, res: ServerResponse, headers: string[], body: Buffer, ex: Exchange): Promise<Outcome> {
    const empty = await refuseEmptyListing(ex, catalogue);
    if (decision.hasSubscribers) {
      decision.publish({
        request: req,
        stage: 'tools_list',
        allowed: empty === undefined,
        principal: ex.principal,
        ...(empty?.kind === 'deny' && { error: empty.error }),
        durationSeconds: 0,
      });
    }
    if (empty !== undefined && empty.kind === 'deny') return refuse(res, ex.message, empty);
    const up = await requestBuffered(pool, req, res, headers, body, maxRewriteBytes);
    if (!up.ok) {
      if (up.error === 'client_closed') return 'client_closed';
      sendError(res, ex.message.id, up.error);
      return up.error;
    }
    const contentType = up.headers['content-type'];
    const firstPage = (ex.message.params as { cursor?: unknown } | undefined)?.cursor === undefined;
    const edit = hideUnlisted(discover === undefined ? toolsListEdit(ex) : await discover.deferredList(ex, firstPage), deps.mayList);
    const rewritten = up.status === 200
      ? rewriteResult(typeof contentType === 'string' ? contentType : undefined, up.body, ex.message.id, edit)
      : up.body;
    if (rewritten === undefined) {
      // A list toolgate cannot read cannot be filtered; never pass it on unfiltered.
      sendError(res, ex.message.id, 'upstream_unavailable');
      return 'upstream_unavailable';
    }
    const out = clientResponseHeaders(up.headers);
    delete out['content-length'];
    res.writeHead(up.status, { ...out, 'content-length': String(rewritten.length) });
    res.end(rewritten);
    return 'forwarded';
  }

  return {
    async authenticate(req) {
      const e = current();
      const began = decision.hasSubscribers ? performance.now() : 0;
      const r = await authenticate(e.verifiers, { headers: req.headers });
      if (decision.hasSubscribers) {
        decision.publish({
          request: req,
          stage: 'authentication',
          allowed: r.ok,
          ...(r.ok ? { principal: r.principal } : { error: 'unauthenticated' }),
          durationSeconds: (performance.now() - began) / 1000,
        });
      }
      if (r.ok) return { ok: true, principal: r.principal };
      return { ok: false, challenge: unauthorizedChallenge(r.code, e.policy.authentication.resourceMetadataUrl) };
    },

    ownsSession(req, principal) {
      const id = req.headers[SESSION_HEADER];
      if (id === undefined) return true;
      const owned = sessions.owns(id as string, principal.id);
      if (decision.hasSubscribers) {
        decision.publish({ request: req, stage: 'session', allowed: owned, principal, ...(!owned && { error: 'session_not_found' }), durationSeconds: 0 });
      }
      return owned;
    },

    sessionEnd(req) {
      const id = req.headers[SESSION_HEADER];
      if (req.method !== 'DELETE' || id === undefined) return undefined;
      return (status) => {
        if (status >= 200 && status < 300) sessions.end(id as string);
      };
    },

    eventStreamHook(principal) {
      return listChanged === undefined ? undefined : tellOnChange(listChanged, principal, SESSION_EVENT);
    },

    async handle(req, res, headers, body, message, principal) {
      const method = message.method;
      if (listChanged !== undefined && method === LISTEN_METHOD && message.kind === 'request' && listensForToolChanges(message.params)) {
        // 2026-07-28 has no GET stream: list changes go on the caller's listen stream, stamped with its subscription.
        const onEventStream = tellOnChange(listChanged, principal, listChangedEvent(message.id));
        return forward(pool, req, res, headers, body, message.id, { onEventStream });
      }
      if (method === 'initialize' && message.kind === 'request') {
        return forward(pool, req, res, headers, body, message.id, { onResponseHead: (status, head) => bindSession(status, head, principal) });
      }
      if (message.kind === 'notification' && method !== undefined && policed.has(method)) {
        // A request method without an id: a generic JSON-RPC server runs such
        // a notification all the same, and it would have passed unchecked.
        sendError(res, null, 'invalid_request');
        return 'invalid_request';
      }
      if (message.kind !== 'request' || method === undefined || !policed.has(method)) {
        return forward(pool, req, res, headers, body, message.id);
      }
      const e = current();
      const pending = grants.snapshot(principal);
      const held = !(pending instanceof Promise);
      if (snapshotLookup.hasSubscribers) snapshotLookup.publish({ result: held ? 'hit' : 'miss' });
      const snap = held ? pending : await pending;
      if (!snap.ok) {
        if (decision.hasSubscribers) decision.publish({ request: req, stage: 'grants', allowed: false, principal, error: 'grants_unavailable', durationSeconds: 0 });
        sendError(res, message.id, 'grants_unavailable');
        return 'grants_unavailable';
      }
      const ex: Exchange = { request: req, message, principal, policy: e.policy, snapshot: snap.snapshot, catalogue, rowsForTool };
      if (method === 'tools/list') return toolsList(req, res, headers, body, ex);
      if (discover !== undefined && (method === DISCOVER_METHOD || message.name === SEARCH_TOOL_NAME)) {
        const limited = await discoveryChain.run(ex);
        if (limited.kind === 'deny') return refuse(res, message, limited);
        if (method === DISCOVER_METHOD) return answer(res, message, await discover.discover(ex, message.params));
        return answer(res, message, await discover.searchTool(ex, message.params?.arguments));
      }
      const verdict = await chain.run(ex);
      if (verdict.kind === 'deny') return refuse(res, message, verdict);
      if (verdict.kind === 'respond') return answer(res, message, { ok: true, result: verdict.result });
      // The tool's own deadline bounds the wait for the upstream's answer.
      return forward(pool, req, res, headers, body, message.id, { headersTimeoutMs: toolMetadata(e.policy, message.name as string).timeoutMs });
    },
  };
}
