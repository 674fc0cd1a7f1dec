import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server as V1Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler, Server as V2Server } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { readAll } from './http-server.ts';

/**
 * A tools-only MCP server for catalogue tests, built on the real SDKs: a
 * sessionful 2025-11-25 server (v1 low-level Server) or a stateless
 * 2026-07-28 one (v2 createMcpHandler). Its tool list is plain data the test
 * edits, served in pages of `pageSize`, and it can be told to fail or stall.
 */
export interface CatalogueServer {
  readonly url: string;
  readonly port: number;
  /** What tools/list serves, entries verbatim (malformed ones included). */
  tools: unknown[];
  pageSize: number;
  /** Every tools/list request received, by cursor (undefined = first page). */
  readonly listCalls: (string | undefined)[];
  /** Answer every HTTP request with this status instead of serving it. */
  failWith: number | undefined;
  /** Hold each tools/list answer this long. */
  delayMs: number;
  /** Sends notifications/tools/list_changed to every open session or subscription. */
  readonly notifyChanged: () => Promise<void>;
  close(): Promise<void>;
}

export interface CatalogueServerOptions {
  readonly era: '2025' | '2026';
  readonly tools?: unknown[];
  readonly pageSize?: number;
  /** Listen on this loopback port (e.g. one that was free a moment ago); 0 picks one. */
  readonly port?: number;
}

export function tool(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    description: `The ${name} tool`,
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    ...extra,
  };
}

export async function startCatalogueServer(opts: CatalogueServerOptions): Promise<CatalogueServer> {
  const state = {
    tools: opts.tools ?? [tool('alpha'), tool('beta')],
    pageSize: opts.pageSize ?? 100,
    listCalls: [] as (string | undefined)[],
    failWith: undefined as number | undefined,
    delayMs: 0,
  };
  const listPage = async (cursor: string | undefined) => {
    state.listCalls.push(cursor);
    const offset = cursor === undefined ? 0 : Number(cursor.slice(1));
    const end = offset + state.pageSize;
    // The page is cut before the delay: a slow answer reflects the list as it was asked.
    const page = {
      tools: state.tools.slice(offset, end),
      ...(end < state.tools.length ? { nextCursor: `o${end}` } : {}),
    };
    if (state.delayMs > 0) await new Promise((r) => setTimeout(r, state.delayMs));
    return page as { tools: never[]; nextCursor?: string };
  };
  const era = opts.era === '2025' ? v1Era(listPage) : v2Era(listPage);
  const http = createServer((req, res) => {
    if (state.failWith !== undefined) {
      res.writeHead(state.failWith, { 'content-type': 'text/plain' }).end('unavailable');
      return;
    }
    void era.handle(req, res);
  });
  http.listen(opts.port ?? 0, '127.0.0.1');
  await once(http, 'listening');
  const { port } = http.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    notifyChanged: era.notifyChanged,
    close: async () => {
      await era.close();
      await new Promise<void>((r) => {
        http.close(() => r());
        http.closeAllConnections();
      });
    },
  });
}

type ListPage = (cursor: string | undefined) => Promise<{ tools: never[]; nextCursor?: string }>;

interface Era {
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  readonly notifyChanged: () => Promise<void>;
  close(): Promise<void>;
}

function v1Era(listPage: ListPage): Era {
  const sessions = new Map<string, { server: V1Server; transport: StreamableHTTPServerTransport }>();
  return {
    async handle(req, res) {
      const sid = req.headers['mcp-session-id'] as string | undefined;
      const body = req.method === 'POST' ? JSON.parse((await readAll(req)).toString('utf8')) : undefined;
      let transport = sid !== undefined ? sessions.get(sid)?.transport : undefined;
      if (transport === undefined) {
        if (req.method !== 'POST' || !isInitializeRequest(body)) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
          return;
        }
        const server = new V1Server(
          { name: 'catalogue-v1', version: '1.0.0' },
          { capabilities: { tools: { listChanged: true } } },
        );
        server.setRequestHandler(ListToolsRequestSchema, (r) => listPage(r.params?.cursor));
        const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, { server, transport: created });
          },
        });
        // oxlint-disable-next-line prefer-add-event-listener -- the MCP SDK transport's callback property; it is no EventTarget
        created.onclose = () => {
          if (created.sessionId !== undefined) sessions.delete(created.sessionId);
        };
        await server.connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res, body);
    },
    async notifyChanged() {
      await Promise.all([...sessions.values()].map((s) => s.server.sendToolListChanged()));
    },
    async close() {
      await Promise.all([...sessions.values()].map((s) => s.server.close()));
    },
  };
}

function v2Era(listPage: ListPage): Era {
  const handler = createMcpHandler(() => {
    const server = new V2Server(
      { name: 'catalogue-v2', version: '2.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler('tools/list', (r) => listPage(r.params?.cursor));
    return server;
  });
  const node = toNodeHandler(handler);
  return {
    handle: async (req, res) => {
      await node(req, res);
    },
    notifyChanged: async () => handler.notify.toolsChanged(),
    close: () => handler.close(),
  };
}
