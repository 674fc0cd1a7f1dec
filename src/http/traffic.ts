import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'undici';
import type { Principal } from '../auth/types.ts';
import type { Settings } from '../config/settings.ts';
import { inflight, requestClassified, requestEnd, requestStart } from '../telemetry/channels.ts';
import { log } from '../telemetry/log.ts';
import { forward, type ForwardOptions, type ForwardOutcome } from '../upstream/forward.ts';
import { BodyLimit, declaredTooLarge, readBody } from './body.ts';
import { classify } from './classify.ts';
import { refuseCaller, type Enforcer } from './enforce.ts';
import { encodeHeaderValue } from './header-value.ts';
import { CREDENTIAL_HEADERS, paramFields, repeatsMcpField, upstreamRequestHeaders } from './headers.ts';
import { sendError, type JsonRpcId } from './jsonrpc.ts';
import { methodLabel } from './methods.ts';
import { targetRouter, underPrefix } from './target.ts';

/** Methods forwarded as they are on the MCP path: 2025 session operations and CORS. */
const PASSED_ON_MCP_PATH = new Set(['GET', 'DELETE', 'HEAD', 'OPTIONS']);
const ALLOW = 'POST, GET, DELETE, HEAD, OPTIONS';
const BEGUN = Object.freeze({ delta: 1 });
const DONE = Object.freeze({ delta: -1 });

export interface TrafficDeps {
  readonly settings: Settings;
  readonly pool: Pool;
  /** Absent in transparent mode (no policy configured). */
  readonly enforcer?: Enforcer | undefined;
}

export type Outcome = ForwardOutcome | 'answered' | 'parse_error' | 'duplicate_key' | 'invalid_request' | 'header_mismatch' | 'aborted' | 'internal_error' | 'unauthenticated' | 'invalid_path' | 'not_found' | 'session_not_found';

/**
 * The inbound request path. Everything per request is decided here in a
 * fixed order: limits, routing, authentication, classification, policy,
 * forwarding; each step that refuses answers with a registry error and stops.
 */
export function createTrafficHandler(deps: TrafficDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { settings, pool, enforcer } = deps;
  const mcpPath = settings.mcpPath;
  const route = targetRouter(mcpPath);
  const passthrough = settings.passthroughPaths;
  const maxRawHeaders = settings.maxHeaders * 2;
  // Only toolgate may say who called: a client's copy of the identity field never reaches the server.
  const identity = settings.principalHeader;
  const spoofable: ReadonlySet<string> | undefined = identity === undefined ? undefined : new Set([identity]);
  const drop = enforcer === undefined ? spoofable : new Set([...CREDENTIAL_HEADERS, ...(spoofable ?? [])]);
  // Mcp-Method, Mcp-Name and Mcp-Param-* toolgate ignored (no 2026-07-28 version) must not reach a server that might act on them.
  const dropIgnored = new Set([...(drop ?? []), 'mcp-method', 'mcp-name']);
  const ignoredFields = (req: IncomingMessage): ReadonlySet<string> => {
    const params = paramFields(req.rawHeaders);
    return params.length === 0 ? dropIgnored : new Set([...dropIgnored, ...params]);
  };
  const withIdentity = (headers: string[], principal: Principal | undefined): string[] => {
    if (identity !== undefined && principal !== undefined) headers.push(identity, encodeHeaderValue(principal.id));
    return headers;
  };

  // Every request ends in exactly one observe(), which also closes its
  // in-flight count (cheaper than a 'close' listener per response).
  const observe = (req: IncomingMessage, res: ServerResponse, start: number, label: string, outcome: Outcome) => {
    if (inflight.hasSubscribers) inflight.publish(DONE);
    if (requestEnd.hasSubscribers) {
      requestEnd.publish({
        request: req,
        method: label,
        outcome,
        status: res.statusCode,
        durationSeconds: (performance.now() - start) / 1000,
      });
    }
  };

  const guarded = (req: IncomingMessage, res: ServerResponse, start: number, work: Promise<void>) => {
    work.catch((err: unknown) => {
      // A bug, not bad input: log its kind only, answer generically.
      log.error('request handler failed', { error: err instanceof Error ? err.name : typeof err });
      sendError(res, null, 'internal_error');
      observe(req, res, start, 'unclassified', 'internal_error');
    });
  };

  return (req, res) => {
    const start = performance.now();
    if (inflight.hasSubscribers) inflight.publish(BEGUN);
    if (requestStart.hasSubscribers) requestStart.publish({ request: req });
    if (req.rawHeaders.length > maxRawHeaders) {
      sendError(res, null, 'headers_too_large', undefined, { connection: 'close' });
      observe(req, res, start, 'http', 'headers_too_large');
      return;
    }
    const where = route(req.url ?? '/');
    if (!where.ok) {
      sendError(res, null, where.code);
      observe(req, res, start, 'http', where.code);
      return;
    }
    // Upstream sees the target toolgate routed, never one it might route differently.
    req.url = where.target;
    if (where.kind === 'other') {
      // With a policy, only the listed prefixes (OAuth metadata and the like,
      // reachable without a credential by design) bypass the checks.
      if (enforcer !== undefined && !passthrough.some((prefix) => underPrefix(where.path, prefix))) {
        sendError(res, null, 'not_found');
        observe(req, res, start, 'http', 'not_found');
        return;
      }
      guarded(req, res, start, passThrough(req, res, null, spoofable).then((o) => observe(req, res, start, 'passthrough', o)));
      return;
    }
    if (req.method === 'POST') {
      guarded(req, res, start, handlePost(req, res, start));
      return;
    }
    if (req.method !== undefined && PASSED_ON_MCP_PATH.has(req.method)) {
      guarded(req, res, start, handleSessionOperation(req, res, start));
      return;
    }
    sendError(res, null, 'method_not_allowed', undefined, { allow: ALLOW });
    observe(req, res, start, 'http', 'method_not_allowed');
  };

  function passThrough(req: IncomingMessage, res: ServerResponse, rpcId: JsonRpcId, strip: ReadonlySet<string> | undefined, options: ForwardOptions = {}, principal?: Principal): Promise<Outcome> {
    if (declaredTooLarge(req, settings.maxBodyBytes)) {
      sendError(res, rpcId, 'payload_too_large', undefined, { connection: 'close' });
      return Promise.resolve('payload_too_large');
    }
    const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    const body = hasBody ? req.pipe(new BodyLimit(settings.maxBodyBytes)) : null;
    return forward(pool, req, res, withIdentity(upstreamRequestHeaders(req, strip), principal), body, rpcId, options);
  }

  async function handleSessionOperation(req: IncomingMessage, res: ServerResponse, start: number): Promise<void> {
    const label = `http_${req.method?.toLowerCase()}`;
    if (repeatsMcpField(req.rawHeaders)) {
      sendError(res, null, 'header_mismatch');
      observe(req, res, start, label, 'header_mismatch');
      return;
    }
    let options: ForwardOptions = {};
    let principal: Principal | undefined;
    // CORS preflights carry no credentials by design.
    if (enforcer !== undefined && req.method !== 'OPTIONS') {
      const who = await enforcer.authenticate(req);
      if (!who.ok) {
        observe(req, res, start, label, refuseCaller(res, who));
        return;
      }
      if (!enforcer.ownsSession(req, who.principal)) {
        sendError(res, null, 'session_not_found');
        observe(req, res, start, label, 'session_not_found');
        return;
      }
      // The GET stream is where a 2025 session's server-initiated messages go.
      options = { onEventStream: req.method === 'GET' ? enforcer.eventStreamHook(who.principal) : undefined, onResponseHead: enforcer.sessionEnd(req) };
      principal = who.principal;
    }
    observe(req, res, start, label, await passThrough(req, res, null, drop, options, principal));
  }

  async function handlePost(req: IncomingMessage, res: ServerResponse, start: number): Promise<void> {
    if (repeatsMcpField(req.rawHeaders)) {
      sendError(res, null, 'header_mismatch');
      observe(req, res, start, 'unclassified', 'header_mismatch');
      return;
    }
    // Authenticate before reading the body, so an unauthenticated client
    // cannot make toolgate buffer megabytes.
    const who = enforcer === undefined ? undefined : await enforcer.authenticate(req);
    if (who !== undefined && !who.ok) {
      observe(req, res, start, 'unclassified', refuseCaller(res, who));
      return;
    }
    const read = await readBody(req, settings.maxBodyBytes);
    if (!read.ok) {
      if (read.code === 'payload_too_large') {
        sendError(res, null, 'payload_too_large', undefined, { connection: 'close' });
      }
      observe(req, res, start, 'unclassified', read.code);
      return;
    }
    const h = req.headers;
    const c = classify(
      {
        protocolVersion: h['mcp-protocol-version'] as string | undefined,
        method: h['mcp-method'] as string | undefined,
        name: h['mcp-name'] as string | undefined,
      },
      read.body,
    );
    if (requestClassified.hasSubscribers && c.ok) requestClassified.publish({ request: req, message: c });
    if (!c.ok) {
      sendError(res, c.id, c.code);
      observe(req, res, start, 'unclassified', c.code);
      return;
    }
    if (who !== undefined && !(enforcer as Enforcer).ownsSession(req, who.principal)) {
      sendError(res, c.id, 'session_not_found');
      observe(req, res, start, methodLabel(c.method), 'session_not_found');
      return;
    }
    const headers = withIdentity(upstreamRequestHeaders(req, c.era === 'legacy' ? ignoredFields(req) : drop), who?.principal);
    const outcome = who === undefined
      ? await forward(pool, req, res, headers, read.body, c.id)
      : await (enforcer as Enforcer).handle(req, res, headers, read.body, c, who.principal);
    observe(req, res, start, methodLabel(c.method), outcome);
  }
}
