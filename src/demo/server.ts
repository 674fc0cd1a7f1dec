import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { z } from 'zod';

/**
 * A small stateless MCP server (v2 SDK, speaks 2026-07-28) for trying
 * toolgate locally: a read-only tool, a write tool, a tool that is only found
 * through discovery and a destructive one. What each may do is toolgate's
 * business (examples/demo/policy.yaml), never the server's.
 */
function demoTools(): McpServer {
  const server = new McpServer({ name: 'toolgate-demo', version: '2.0.0' });
  server.registerTool(
    'get_weather',
    {
      title: 'Current weather',
      description: 'Current weather for a city',
      inputSchema: z.object({
        city: z.string().min(1).max(100),
        units: z.enum(['metric', 'imperial']).default('metric'),
      }),
      annotations: { readOnlyHint: true },
    },
    async ({ city, units }) => ({
      content: [{ type: 'text', text: `${city}: 21°${units === 'metric' ? 'C' : 'F'}, clear` }],
    }),
  );
  server.registerTool(
    'create_ticket',
    {
      title: 'Create support ticket',
      description: 'Open a support ticket with a title and priority',
      inputSchema: z.object({ title: z.string().min(3).max(200), priority: z.enum(['low', 'normal', 'high']) }),
    },
    async ({ title, priority }) => ({
      content: [{ type: 'text', text: `ticket ${randomUUID().slice(0, 8)} (${priority}): ${title}` }],
    }),
  );
  server.registerTool(
    'convert_currency',
    {
      title: 'Convert currency',
      description: "Convert an amount of money from one currency to another at today's exchange rate",
      inputSchema: z.object({ amount: z.number().positive(), from: z.string().length(3), to: z.string().length(3) }),
      annotations: { readOnlyHint: true },
    },
    async ({ amount, from, to }) => ({
      content: [{ type: 'text', text: `${amount} ${from} = ${(amount * 1.08).toFixed(2)} ${to}` }],
    }),
  );
  server.registerTool(
    'delete_ticket',
    {
      title: 'Delete support ticket',
      description: 'Delete a support ticket for good',
      inputSchema: z.object({ id: z.string().min(1).max(64) }),
      annotations: { destructiveHint: true },
    },
    async ({ id }) => ({ content: [{ type: 'text', text: `ticket ${id} deleted` }] }),
  );
  return server;
}

/** Where RFC 9728 puts the metadata of the resource at `/mcp`; toolgate forwards `/.well-known/` unchecked. */
export const METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';

/**
 * `resource` is the MCP endpoint as clients reach it (through toolgate),
 * which the protected-resource metadata names; asked per request, since
 * toolgate's port is chosen after this server starts.
 */
export function createDemoServer(resource: () => string | undefined = () => undefined): Server {
  const handler = toNodeHandler(createMcpHandler(demoTools));
  return createServer((req, res) => {
    const url = resource();
    if (req.url === METADATA_PATH && req.method === 'GET' && url !== undefined) {
      // No authorization server: the demo's principals sign in with static keys, sent as bearer tokens.
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          resource: url,
          resource_name: 'toolgate demo',
          bearer_methods_supported: ['header'],
          scopes_supported: ['tickets.write'],
        }),
      );
      return;
    }
    if (!req.url?.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    void handler(req, res);
  });
}
