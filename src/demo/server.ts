import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * A small sessionful MCP server (v1 SDK, 2025-11-25) with tools of different
 * shapes and side effects, for trying toolgate locally.
 */
function demoTools(): McpServer {
  const server = new McpServer({ name: 'toolgate-demo', version: '1.0.0' });
  server.registerTool(
    'get_weather',
    {
      title: 'Current weather',
      description: 'Current weather for a city',
      inputSchema: { city: z.string().min(1).max(100), units: z.enum(['metric', 'imperial']).default('metric') },
      annotations: { readOnlyHint: true },
    },
    async ({ city, units }) => ({ content: [{ type: 'text', text: `${city}: 21°${units === 'metric' ? 'C' : 'F'}, clear` }] }),
  );
  server.registerTool(
    'create_ticket',
    {
      title: 'Create support ticket',
      description: 'Open a support ticket with a title and priority',
      inputSchema: { title: z.string().min(3).max(200), priority: z.enum(['low', 'normal', 'high']) },
    },
    async ({ title, priority }) => ({ content: [{ type: 'text', text: `ticket ${randomUUID().slice(0, 8)} (${priority}): ${title}` }] }),
  );
  server.registerTool(
    'count',
    { description: 'Count to n, reporting progress on the way', inputSchema: { n: z.number().int().min(1).max(50) } },
    async ({ n }, extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= n; i++) {
        if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: n } });
        await new Promise((r) => setTimeout(r, 50));
      }
      return { content: [{ type: 'text', text: `counted to ${n}` }] };
    },
  );
  return server;
}

export function createDemoServer(): Server {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  return createServer(async (req, res) => {
    if (!req.url?.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
    if (transport === undefined) {
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'No valid session; send initialize first' } }));
        return;
      }
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, created);
        },
      });
      created.onclose = () => {
        if (created.sessionId !== undefined) transports.delete(created.sessionId);
      };
      await demoTools().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, body);
  });
}
