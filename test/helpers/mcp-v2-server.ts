import type { IncomingHttpHeaders } from 'node:http';
import { Client, StreamableHTTPClientTransport, type ClientOptions } from '@modelcontextprotocol/client';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { z } from 'zod';
import { listenOnLoopback, type Listening } from './http-server.ts';

export interface V2Server extends Listening {
  readonly url: string;
  readonly seen: { method: string; headers: IncomingHttpHeaders }[];
}

/** A stateless 2026-07-28 MCP server from the v2 SDK packages. */
export async function startV2Server(): Promise<V2Server> {
  const handler = toNodeHandler(
    createMcpHandler(() => {
      const server = new McpServer({ name: 'v2-fixture', version: '2.0.0' });
      server.registerTool(
        'echo',
        { description: 'Echo the given text back', inputSchema: z.object({ text: z.string() }) },
        async ({ text }) => ({ content: [{ type: 'text', text }] }),
      );
      // SEP-2243: `region` is mirrored into an Mcp-Param-Region header.
      server.registerTool(
        'execute_sql',
        {
          description: 'Execute SQL in a region',
          inputSchema: z.object({ region: z.string().meta({ 'x-mcp-header': 'Region' }), query: z.string() }),
        },
        async ({ region, query }) => ({ content: [{ type: 'text', text: `${region}: ${query}` }] }),
      );
      // Not a SEP-986 name on purpose: the SDK warns, and the header must be base64.
      server.registerTool(
        'città',
        { description: 'A tool whose name needs the base64 header form', inputSchema: z.object({}) },
        async () => ({ content: [{ type: 'text', text: 'ciao' }] }),
      );
      return server;
    }),
  );
  const seen: { method: string; headers: IncomingHttpHeaders }[] = [];
  const listening = await listenOnLoopback((req, res) => {
    seen.push({ method: req.method ?? '', headers: req.headers });
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    void handler(req, res);
  });
  return { ...listening, url: `${listening.origin}/mcp`, seen };
}

/** A v2 SDK client that speaks only 2026-07-28, connected to `url`. */
export async function connectModernClient(url: string, options: ClientOptions = {}): Promise<Client> {
  const client = new Client(
    { name: 'it', version: '2.0.0' },
    { ...options, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}
