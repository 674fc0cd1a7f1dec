import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { listenOnLoopback, readAll, type Listening } from './http-server.ts';

const OBJECT = { type: 'object', properties: { n: { type: 'integer' }, text: { type: 'string' } } } as const;

/** Tools with the side effects the execution tests need; the policy, not these, says which is which. */
export const EXECUTION_TOOLS: Tool[] = [
  { name: 'read_status', description: 'Read a status', inputSchema: OBJECT },
  { name: 'update_record', description: 'Set a record to a value', inputSchema: OBJECT },
  { name: 'refund_payment', description: 'Refund a payment', inputSchema: OBJECT },
  { name: 'send_mail', description: 'Send an email', inputSchema: OBJECT },
  { name: 'stream_report', description: 'Build a report, telling progress', inputSchema: OBJECT },
  { name: 'stream_export', description: 'Export data, telling progress', inputSchema: OBJECT },
];

/** What the upstream does to the next tools/call; tests change it while it runs. */
export interface Behaviour {
  /** How long a tool takes before answering. */
  delayMs: number;
  /** For tools/call number n (from 1): 0 runs it; an HTTP status answers it with that status, unrun; -1 cuts the connection, unrun. */
  fail: (n: number) => number;
  /** Retry-After sent with each failure status, in seconds. */
  retryAfter: string | undefined;
  /** stream_* tools: progress notifications, one every delayMs / progress. */
  progress: number;
}

export interface CountingUpstream extends Listening {
  readonly behaviour: Behaviour;
  /** tools/call HTTP requests received, failed or not. */
  readonly attempts: () => number;
  /** Tool runs that started (the side effect happened, or is happening). */
  readonly executions: () => number;
  /** Runs per forwarded idempotency key (the scoped key toolgate sends in `_meta`). */
  readonly byKey: Map<string, number>;
  /** Runs whose connection the caller closed before the answer was sent. */
  readonly aborted: () => number;
  /** Headers of the last tools/call. */
  readonly lastHeaders: () => Record<string, unknown>;
}

/**
 * A real MCP server (v1 SDK, stateless, 2025-11-25) whose tools count their
 * executions and can be made slow, failing (any status) or dead (connection cut),
 * and which notices when toolgate aborts a call mid-way.
 */
export async function startCountingUpstream(): Promise<CountingUpstream> {
  const behaviour: Behaviour = { delayMs: 0, fail: () => 0, retryAfter: undefined, progress: 0 };
  let attempts = 0;
  let executions = 0;
  let aborted = 0;
  let lastHeaders: Record<string, unknown> = {};
  const byKey = new Map<string, number>();
  const listening = await listenOnLoopback(async (req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(req.method === 'OPTIONS' ? 204 : 405).end();
      return;
    }
    const body = JSON.parse((await readAll(req)).toString('utf8'));
    if (body.method === 'tools/call') {
      const n = ++attempts;
      lastHeaders = { ...req.headers };
      const status = behaviour.fail(n);
      if (status === -1) {
        res.socket?.destroy();
        return;
      }
      if (status > 0) {
        res.writeHead(status, {
          'content-type': 'application/json',
          ...(behaviour.retryAfter !== undefined && { 'retry-after': behaviour.retryAfter }),
        });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32603, message: 'overloaded' } }));
        return;
      }
    }
    const server = new Server({ name: 'counting-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: EXECUTION_TOOLS }));
    server.setRequestHandler(CallToolRequestSchema, async (r, extra) => {
      executions++;
      const key = r.params._meta?.['io.toolgate/idempotencyKey'];
      if (typeof key === 'string') byKey.set(key, (byKey.get(key) ?? 0) + 1);
      const token = r.params._meta?.progressToken;
      const steps = r.params.name.startsWith('stream_') && token !== undefined ? behaviour.progress : 0;
      for (let i = 1; i <= steps; i++) {
        await new Promise((done) => setTimeout(done, behaviour.delayMs / steps));
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: i, total: steps },
        });
      }
      if (steps === 0 && behaviour.delayMs > 0) await new Promise((done) => setTimeout(done, behaviour.delayMs));
      return { content: [{ type: 'text', text: `ran ${r.params.name} #${executions}` }] };
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !String(body.params?.name).startsWith('stream_'),
    });
    await server.connect(transport);
    res.on('close', () => {
      if (!res.writableFinished && body.method === 'tools/call') aborted++;
      void transport.close();
      void server.close();
    });
    await transport.handleRequest(req, res, body);
  });
  return {
    ...listening,
    behaviour,
    attempts: () => attempts,
    executions: () => executions,
    byKey,
    aborted: () => aborted,
    lastHeaders: () => lastHeaders,
  };
}
