/**
 * A real MCP server (v1 SDK for listing) that counts what it serves and misbehaves on
 * request: `stall_head` never answers, `stall_body` sends its head and part of
 * a body and then goes quiet. Every other tool echoes. For resilience tests
 * and the chaos suite.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { listenOnLoopback, readAll, type Listening } from './http-server.ts';
import { answerStateless } from './mcp-policy-server.ts';

const OBJECT = { type: 'object' as const, properties: { text: { type: 'string' } } };
export const FAULT_TOOLS: Tool[] = [
  { name: 'echo', description: 'Echo the text back', inputSchema: OBJECT },
  { name: 'stall_head', description: 'Never answers', inputSchema: OBJECT },
  { name: 'stall_body', description: 'Starts answering, then goes quiet', inputSchema: OBJECT },
];

export interface FaultUpstream extends Listening {
  readonly url: string;
  /** tools/call requests received, by tool name. */
  readonly calls: Map<string, number>;
  /** Upstream requests whose connection toolgate closed before they were answered. */
  abandoned(): number;
  /** Sockets open on the upstream right now. */
  openSockets(): number;
}

export async function startFaultUpstream(): Promise<FaultUpstream> {
  const calls = new Map<string, number>();
  let abandoned = 0;
  const listening = await listenOnLoopback(async (req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(req.method === 'OPTIONS' ? 204 : 405).end();
      return;
    }
    const body = JSON.parse((await readAll(req)).toString('utf8'));
    const name: unknown = body?.params?.name;
    if (body.method === 'tools/call' && typeof name === 'string') {
      calls.set(name, (calls.get(name) ?? 0) + 1);
      if (name === 'stall_head' || name === 'stall_body') {
        res.on('close', () => {
          if (!res.writableFinished) abandoned++;
        });
        if (name === 'stall_body')
          res.writeHead(200, { 'content-type': 'application/json' }).write('{"jsonrpc":"2.0",');
        return;
      }
      // Answered without the SDK: under load the fixture must not be what is slow.
      const text = JSON.stringify({
        jsonrpc: '2.0',
        id: body.id,
        result: { content: [{ type: 'text', text: `called ${name}` }] },
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
      return;
    }
    await answerStateless('fault-fixture', FAULT_TOOLS, req, res, body);
  });
  let sockets = 0;
  listening.server.on('connection', (s) => {
    sockets++;
    s.once('close', () => sockets--);
  });
  return {
    ...listening,
    url: `${listening.origin}/mcp`,
    calls,
    abandoned: () => abandoned,
    openSockets: () => sockets,
  };
}
