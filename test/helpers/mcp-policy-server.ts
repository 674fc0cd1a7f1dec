import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listenOnLoopback, readAll, type Listening } from './http-server.ts';

/** Tools with rich raw JSON Schemas, as real servers ship them. */
export const POLICY_TOOLS: Tool[] = [
  {
    name: 'search_docs',
    description: 'Search the documentation',
    inputSchema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 200 },
        limit: { type: 'integer', minimum: 1, maximum: 50, default: 10 },
        filters: {
          type: 'object',
          properties: { lang: { type: 'string', pattern: '^[a-z]{2}$' } },
          additionalProperties: false,
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
  },
  {
    name: 'delete_repo',
    description: 'Delete a repository',
    inputSchema: {
      type: 'object',
      properties: { repo: { type: 'string', pattern: '^[a-z0-9-]+/[a-z0-9-]+$' } },
      required: ['repo'],
    },
  },
  { name: 'rotate_keys', description: 'Rotate signing keys', inputSchema: { type: 'object', properties: {} } },
  {
    name: 'shared_ref',
    description: 'A schema that references a shared schema by URI',
    inputSchema: {
      type: 'object',
      properties: { code: { $ref: 'https://schemas.example.com/code.json' } },
      required: ['code'],
    },
  },
  {
    name: 'weird_schema',
    description: 'A schema toolgate cannot enforce',
    inputSchema: { type: 'object', properties: { x: { $ref: 'https://schemas.example.com/x.json' } } },
  },
];

export interface PolicyServer extends Listening {
  readonly url: string;
  /** Raw bodies and headers of every tools/call the server received. */
  readonly calls: { body: string; headers: Record<string, unknown> }[];
  readonly allHeaders: Record<string, unknown>[];
  /** Tools added after start (announced on the next tools/list). */
  readonly extraTools: Tool[];
}

/**
 * Answers one request as a stateless MCP server (v1 SDK, low-level Server)
 * listing `tools` and echoing calls.
 */
export async function answerStateless(
  name: string,
  tools: Tool[],
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  const server = new Server({ name, version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (r) => ({
    content: [{ type: 'text', text: `called ${r.params.name}` }],
  }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await transport.handleRequest(req, res, body);
}

/** A stateless 2025-11-25 server (v1 SDK, low-level Server) that lists raw schemas and echoes calls. */
export async function startPolicyServer(): Promise<PolicyServer> {
  const calls: { body: string; headers: Record<string, unknown> }[] = [];
  const allHeaders: Record<string, unknown>[] = [];
  const extraTools: Tool[] = [];
  const listening = await listenOnLoopback(async (req, res) => {
    allHeaders.push({ ...req.headers });
    if (req.method !== 'POST') {
      res.writeHead(req.method === 'OPTIONS' ? 204 : 405).end();
      return;
    }
    const raw = (await readAll(req)).toString('utf8');
    const body = JSON.parse(raw);
    if (body.method === 'tools/call') calls.push({ body: raw, headers: { ...req.headers } });
    await answerStateless('policy-fixture', [...POLICY_TOOLS, ...extraTools], req, res, body);
  });
  return { ...listening, url: `${listening.origin}/mcp`, calls, allHeaders, extraTools };
}
