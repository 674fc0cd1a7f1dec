import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { loadSettings } from '../config/settings.ts';
import { SettingError } from '../errors.ts';
import { start } from '../main.ts';
import { createDemoServer } from './server.ts';

/**
 * `npm run demo`: the demo MCP server on a free loopback port with toolgate in
 * front of it on embedded defaults (no Redis, no cluster). Flags and TOOLGATE_*
 * variables work as for `toolgate` itself, except the upstream.
 */
const upstream = createDemoServer();
upstream.listen(0, '127.0.0.1');
await once(upstream, 'listening');
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

let settings;
try {
  settings = loadSettings(['--host', '127.0.0.1', ...process.argv.slice(2), '--upstream', upstreamUrl], process.env);
} catch (err) {
  if (!(err instanceof SettingError)) throw err;
  process.stderr.write(`toolgate demo: ${err.message}\n`);
  process.exit(2);
}
const gate = await start(settings);
await gate.ready;
const mcp = `http://127.0.0.1:${gate.port}${settings.mcpPath}`;
const admin = `http://127.0.0.1:${gate.adminPort}`;
process.stdout.write(`
toolgate is running in front of the demo MCP server.

  MCP endpoint   ${mcp}
  admin          ${admin}/healthz  ${admin}/readyz  ${admin}/metrics

Try:
  curl -si ${mcp} -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \\
    -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
  (then repeat with -H 'mcp-session-id: <the Mcp-Session-Id it returned>' and a tools/list or tools/call body)

  curl -s ${mcp} -d '[{"jsonrpc":"2.0","id":1,"method":"ping"}]'     # a batch: refused with -32600
  curl -s ${admin}/metrics | grep toolgate_requests_total

Or point any MCP client (e.g. npx @modelcontextprotocol/inspector) at ${mcp}.
Ctrl-C stops both.
`);
await new Promise<void>((resolve) => {
  process.once('SIGINT', resolve);
  process.once('SIGTERM', resolve);
});
await gate.close();
upstream.closeAllConnections();
upstream.close();
