import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { OrderedEventStore } from './event-store.ts';
import { z } from 'zod';
import { listenOnLoopback, readAll, type Listening } from './http-server.ts';

export interface V1Server extends Listening {
  readonly url: string;
  /** Headers of every request the server received, in order. */
  readonly seen: { method: string; headers: IncomingHttpHeaders }[];
  /** Live sessions by id, to push server-initiated notifications. */
  readonly sessions: Map<string, McpServer>;
}

function buildServer(): McpServer {
  const server = new McpServer({ name: 'v1-fixture', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echo the given text back', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool(
    'count',
    { description: 'Count to n, reporting progress on the way', inputSchema: { n: z.number().int().min(1).max(20) } },
    async ({ n }, extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= n; i++) {
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: n },
          });
        }
      }
      return { content: [{ type: 'text', text: `counted to ${n}` }] };
    },
  );
  return server;
}

/**
 * A sessionful 2025-11-25 MCP server from the v1 SDK, wired to node:http the
 * way its documentation shows, with an event store so streams can resume.
 * `build` makes each session's server (by default: echo and count tools);
 * with `enableJsonResponse` it answers POSTs with JSON instead of a stream.
 */
export async function startV1Server(
  build: () => McpServer = buildServer,
  options: { readonly enableJsonResponse?: boolean } = {},
): Promise<V1Server> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const sessions = new Map<string, McpServer>();
  const seen: { method: string; headers: IncomingHttpHeaders }[] = [];
  const listening = await listenOnLoopback(async (req, res) => {
    seen.push({ method: req.method ?? '', headers: req.headers });
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    const sid = req.headers['mcp-session-id'] as string | undefined;
    const body = req.method === 'POST' ? JSON.parse((await readAll(req)).toString('utf8')) : undefined;
    let transport = sid !== undefined ? transports.get(sid) : undefined;
    if (transport === undefined) {
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32000, message: 'Bad Request: No valid session ID provided' },
          }),
        );
        return;
      }
      const server = build();
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new OrderedEventStore(),
        enableJsonResponse: options.enableJsonResponse ?? false,
        onsessioninitialized: (id) => {
          transports.set(id, created);
          sessions.set(id, server);
        },
      });
      // oxlint-disable-next-line prefer-add-event-listener -- the MCP SDK transport's callback property; it is no EventTarget
      created.onclose = () => {
        if (created.sessionId !== undefined) {
          transports.delete(created.sessionId);
          sessions.delete(created.sessionId);
        }
      };
      await server.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, body);
  });
  return { ...listening, url: `${listening.origin}/mcp`, seen, sessions };
}
