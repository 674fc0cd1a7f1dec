import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { z } from 'zod';
import { listenOnLoopback, type Listening } from './http-server.ts';
import { sha256 } from './static-keys.ts';

export const CALLER_KEY = 'caller-appr-4b7d1e9c2a5f8b3d6e0a';
export const ALICE_KEY = 'alice-appr-9e2c5a8d1f4b7e0c3a6d';
export const BOB_KEY = 'bob-appr-3c6f9b2e5a8d1c4f7b0e';
export const OPS_KEY = 'ops-appr-8a1d4f7c0e3b6a9d2f5c';
/**
 * caller may call and could approve, but not its own calls; alice approves;
 * bob lacks the approver scope (but holds the gRPC admin scope); ops holds both.
 */
export const APPROVAL_KEYS_YAML = `keys:
  - { sha256: ${sha256(CALLER_KEY)}, principal: caller, scopes: [payments, payments.approve] }
  - { sha256: ${sha256(ALICE_KEY)}, principal: alice, scopes: [payments.approve] }
  - { sha256: ${sha256(BOB_KEY)}, principal: bob, scopes: [payments, toolgate.admin] }
  - { sha256: ${sha256(OPS_KEY)}, principal: ops, scopes: [payments.approve, toolgate.admin] }
`;

/** refund_payment over 100 needs approval by payments.approve; smaller ones run; self_refund lets callers approve their own. */
export function approvalPolicy(expiresIn = '15m'): string {
  return `version: 1
authentication:
  staticKeys: { file: keys.yaml }
tools:
  refund_payment: { sideEffect: non_idempotent_write }
grants:
  - { principal: "*", tool: refund_payment, scopes: [payments], effect: allow }
  - { principal: "*", tool: refund_payment, scopes: [payments], effect: require_approval, name: large-refunds,
      when: 'args.amount > 100', approval: { approverScope: payments.approve, expiresIn: ${expiresIn} } }
  - { principal: "*", tool: self_refund, scopes: [payments], effect: require_approval,
      approval: { approverScope: payments.approve, selfApproval: true } }
`;
}

export interface ApprovalUpstream extends Listening {
  readonly url: string;
  /** Runs per tool. */
  readonly executions: Map<string, number>;
  /** The `params` of every tools/call that reached it, as it received them. */
  readonly calls: Record<string, unknown>[];
}

/** A stateless MCP server from the v2 SDK (2026-07-28 and 2025 clients) whose tools count their runs. */
export async function startApprovalUpstream(): Promise<ApprovalUpstream> {
  const executions = new Map<string, number>();
  const run = (tool: string) => executions.set(tool, (executions.get(tool) ?? 0) + 1);
  const args = z.object({ amount: z.number(), currency: z.string(), note: z.string().optional() });
  const handler = toNodeHandler(
    createMcpHandler(() => {
      const server = new McpServer({ name: 'payments', version: '1.0.0' });
      server.registerTool(
        'refund_payment',
        {
          description: 'Refund a card payment to the customer',
          inputSchema: args,
          annotations: { destructiveHint: true, idempotentHint: false },
        },
        async ({ amount, currency }) => {
          run('refund_payment');
          return { content: [{ type: 'text', text: `refunded ${amount} ${currency}` }] };
        },
      );
      server.registerTool('self_refund', { description: 'Refund yourself', inputSchema: args }, async () => {
        run('self_refund');
        return { content: [{ type: 'text', text: 'refunded' }] };
      });
      return server;
    }),
  );
  const calls: Record<string, unknown>[] = [];
  const listening = await listenOnLoopback(async (req, res) => {
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    if (req.method !== 'POST') {
      void handler(req, res);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      method?: string;
      params?: Record<string, unknown>;
    };
    if (body.method === 'tools/call' && body.params !== undefined) calls.push(body.params);
    void handler(req, res, body);
  });
  return { ...listening, url: `${listening.origin}/mcp`, executions, calls };
}
