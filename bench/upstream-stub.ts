/**
 * A fast, minimal stateless MCP server for benchmarks (loopback only).
 *
 * POST /mcp answers one JSON-RPC message:
 * - `tools/call` of `run_test_suite` (SSE_TOOL_NAME): an SSE stream. Headers
 *   go out at once, a progress notification event after --sse-first-ms, the
 *   result event and the end of the stream after a further --sse-hold-ms. The
 *   hold makes a proxy that buffers the stream show up as a late first event.
 * - any other `tools/call`: a small JSON result echoing the id;
 * - `initialize`, `tools/list`, `ping`: what a real server would say, so a
 *   proxy that probes or syncs its catalogue at start gets real answers
 *   (`--tools N` pads the list to N tools);
 * - notifications and responses: 202 with no body.
 * GET and DELETE /mcp get 405, as a server without standalone streams says.
 */
import { createServer, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { catalogueOf, incidentReport, REPORT_TOOL_NAME, SSE_TOOL_NAME, TOOLS } from './lib/request.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'sse-first-ms': { type: 'string', default: '1' },
    'sse-hold-ms': { type: 'string', default: '5' },
    // tools/list size: the bench tools padded with generated ones (contract-pinning cases).
    tools: { type: 'string', default: String(TOOLS.length) },
  },
});
const listed = catalogueOf(Number(values.tools));
const firstMs = Number(values['sse-first-ms']);
const holdMs = Number(values['sse-hold-ms']);
const CALL_TEXT =
  '3 open issues match: #4812 Checkout times out after second retry; ' +
  '#4790 Card processor 504s under load; #4655 Retry budget ignores idempotency key.';
const REPORT = JSON.stringify(incidentReport());
const reportResult = (id: string) =>
  `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":${REPORT}}],"isError":false}}`;
const callResult = (id: string) =>
  `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":${JSON.stringify(CALL_TEXT)}}],"isError":false}}`;

function results(method: string): unknown {
  switch (method) {
    case 'initialize':
      return {
        protocolVersion: '2025-11-25',
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: 'toolgate-bench-stub', version: '1.0.0' },
      };
    case 'tools/list':
      return { tools: listed };
    default:
      return {};
  }
}

function sendJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function stream(res: ServerResponse, id: string, token: unknown): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  const progress = JSON.stringify({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: { progressToken: token ?? null, progress: 1, total: 2 },
  });
  const first = setTimeout(() => {
    res.write(`event: message\ndata: ${progress}\n\n`);
    const last = setTimeout(() => res.end(`event: message\ndata: ${callResult(id)}\n\n`), holdMs);
    res.once('close', () => clearTimeout(last));
  }, firstMs);
  res.once('close', () => clearTimeout(first));
}

const server = createServer((req, res) => {
  if (req.url !== '/mcp') return sendJson(res, 404, '{}');
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST' }).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let msg: Record<string, any>;
    try {
      msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return sendJson(res, 400, '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
    }
    if (typeof msg.method !== 'string' || !Object.hasOwn(msg, 'id')) {
      res.writeHead(202).end();
      return;
    }
    const id = JSON.stringify(msg.id);
    if (msg.method !== 'tools/call') {
      return sendJson(res, 200, `{"jsonrpc":"2.0","id":${id},"result":${JSON.stringify(results(msg.method))}}`);
    }
    if (msg.params?.name === SSE_TOOL_NAME) return stream(res, id, msg.params?._meta?.progressToken);
    if (msg.params?.name === REPORT_TOOL_NAME) return sendJson(res, 200, reportResult(id));
    sendJson(res, 200, callResult(id));
  });
});
// Longer than any client pool's idle timeout, so no POST races a server-side close between runs.
server.keepAliveTimeout = 65_000;
server.listen(Number(values.port), '127.0.0.1');
