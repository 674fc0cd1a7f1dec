/**
 * Standalone entry for the 2026-07-28 conformance fixture (v2-fixture.ts):
 * `PORT=1234 node bench/conformance/v2-server.ts` serves it statelessly on
 * http://127.0.0.1:1234/mcp, loopback only. Host and Origin are checked
 * against localhost names first (DNS-rebinding protection, which the
 * dns-rebinding-protection scenario expects of a localhost server); 2025-era
 * requests get the SDK's stateless legacy fallback.
 */

import { createServer } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import { fixtureFactory, missingCapability } from './v2-fixture.ts';

const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error('v2-server: PORT must be a TCP port number');
  process.exit(2);
}

const handler = createMcpHandler(fixtureFactory());
const hosts = localhostAllowedHostnames();
const origins = localhostAllowedOrigins();
const serve = toNodeHandler({
  fetch: async (request) =>
    hostHeaderValidationResponse(request, hosts) ??
    originValidationResponse(request, origins) ??
    (await missingCapability(request)) ??
    handler.fetch(request),
});

const server = createServer((req, res) => {
  if (req.url !== '/mcp' && !req.url?.startsWith('/mcp?')) {
    res.writeHead(404).end();
    return;
  }
  void serve(req, res);
});
server.listen(port, '127.0.0.1');

process.once('SIGTERM', () => {
  void handler.close().finally(() => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
});
