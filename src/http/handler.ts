import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Settings } from '../config/settings.ts';
import { sendError } from '../mcp/jsonrpc.ts';
import { targetRouter } from '../mcp/target.ts';
import type { Ended, Outcome } from '../pipeline/outcome.ts';
import type { RequestPath } from '../pipeline/request-path.ts';
import { inflight, requestEnd, requestStart } from '../telemetry/channels.ts';
import { log } from '../telemetry/log.ts';

/** Methods forwarded as they are on the MCP path: 2025 session operations and CORS. */
const PASSED_ON_MCP_PATH = new Set(['GET', 'DELETE', 'HEAD', 'OPTIONS']);
const ALLOW = 'POST, GET, DELETE, HEAD, OPTIONS';
const BEGUN = Object.freeze({ delta: 1 });
const DONE = Object.freeze({ delta: -1 });

/**
 * The inbound server's request handler: the header-count limit, routing by
 * the normalised target, and the HTTP method; then the request path of the
 * mode in force (pipeline/) takes over. Every request ends in exactly one
 * `requestEnd` message.
 */
export function createTrafficHandler(
  settings: Pick<Settings, 'maxHeaders' | 'mcpPath'>,
  path: RequestPath,
): (req: IncomingMessage, res: ServerResponse) => void {
  const route = targetRouter(settings.mcpPath);
  const maxRawHeaders = settings.maxHeaders * 2;

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
      guarded(req, res, start, path.otherPath(req, res, where.path));
      return;
    }
    if (req.method === 'POST') {
      guarded(req, res, start, path.message(req, res));
      return;
    }
    if (req.method !== undefined && PASSED_ON_MCP_PATH.has(req.method)) {
      guarded(req, res, start, path.sessionOperation(req, res));
      return;
    }
    sendError(res, null, 'method_not_allowed', undefined, { allow: ALLOW });
    observe(req, res, start, 'http', 'method_not_allowed');
  };
}

// One observe() per request also closes its in-flight count (cheaper than a 'close' listener per response).
function observe(req: IncomingMessage, res: ServerResponse, start: number, label: string, outcome: Outcome): void {
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
}

function guarded(req: IncomingMessage, res: ServerResponse, start: number, work: Promise<Ended>): void {
  work.then(
    (ended) => observe(req, res, start, ended.label, ended.outcome),
    (err: unknown) => {
      // A bug, not bad input: log its kind only, answer generically.
      log.error('request handler failed', { error: err instanceof Error ? err.name : typeof err });
      sendError(res, null, 'internal_error');
      observe(req, res, start, 'unclassified', 'internal_error');
    },
  );
}
