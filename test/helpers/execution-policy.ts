import { sha256 } from './static-keys.ts';

export const AGENT_KEY = 'agent-exec-5c1e9a7b3d2f4e6a8c0b';
export const OTHER_KEY = 'other-exec-7d3f1b9c5e2a4d6f8b0c';
export const KEYS_YAML = `keys:\n  - { sha256: ${sha256(AGENT_KEY)}, principal: agent, scopes: [ops] }\n  - { sha256: ${sha256(OTHER_KEY)}, principal: other, scopes: [ops] }\n`;

/** The counting upstream's tools with side effects, deadlines and retries; `extra` is appended (rate limits). */
export function executionPolicy(extra = ''): string {
  return `
version: 1
authentication:
  staticKeys: { file: keys.yaml }
tools:
  read_status: { sideEffect: read_only, maxRetries: 3, timeoutMs: 3000 }
  update_record: { sideEffect: idempotent_write, maxRetries: 2, timeoutMs: 3000, maxConcurrent: 2 }
  refund_payment: { sideEffect: non_idempotent_write, timeoutMs: 3000 }
  send_mail: { sideEffect: non_idempotent_write, idempotency: required, maxRetries: 2, timeoutMs: 3000 }
  stream_report: { sideEffect: read_only, timeoutMs: 400, resetTimeoutOnProgress: true }
  stream_export: { sideEffect: read_only, timeoutMs: 400 }
grants:
  - { principal: "*", tool: read_status, scopes: [ops], effect: allow }
  - { principal: "*", tool: update_record, scopes: [ops], effect: allow }
  - { principal: "*", tool: refund_payment, scopes: [ops], effect: allow }
  - { principal: "*", tool: send_mail, scopes: [ops], effect: allow }
  - { principal: "*", tool: stream_report, scopes: [ops], effect: allow }
  - { principal: "*", tool: stream_export, scopes: [ops], effect: allow }
${extra}`;
}

/** A tools/call body; `meta` goes to params._meta. */
export function toolCall(id: number, name: string, args: Record<string, unknown> = {}, meta?: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...(meta !== undefined && { _meta: meta }) } });
}
