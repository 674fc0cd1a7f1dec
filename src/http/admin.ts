import type { Server } from 'node:http';
import type { Registry } from 'prom-client';
import { createServer } from './node-http.ts';

export interface Readiness {
  /** Empty when ready; otherwise closed reason codes, safe to show a prober. */
  reasons(): readonly string[];
}

/**
 * The admin listener: liveness, readiness and metrics, on a port of its own so
 * probes and scrapes never queue behind MCP traffic.
 */
export function createAdminServer(registry: Registry, readiness: Readiness): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/healthz') {
      json(res, 200, { status: 'ok' });
      return;
    }
    if (path === '/readyz') {
      const reasons = readiness.reasons();
      json(
        res,
        reasons.length === 0 ? 200 : 503,
        reasons.length === 0 ? { status: 'ready' } : { status: 'not_ready', reasons },
      );
      return;
    }
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': registry.contentType }).end(text);
        },
        () => json(res, 500, { status: 'error' }),
      );
      return;
    }
    json(res, 404, { status: 'not_found' });
  });
}

function json(res: import('node:http').ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}
