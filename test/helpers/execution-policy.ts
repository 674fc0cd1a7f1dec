import { join } from 'node:path';
import { beforeEach, after, before } from 'node:test';
import { startCountingUpstream, type CountingUpstream } from './counting-upstream.ts';
import { startGateWith, type PolicyGate } from './policy-gate.ts';
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
export function toolCall(
  id: number,
  name: string,
  args: Record<string, unknown> = {},
  meta?: Record<string, unknown>,
): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args, ...(meta !== undefined && { _meta: meta }) },
  });
}

export interface ExecutionGate {
  setup: PolicyGate<CountingUpstream>;
  upstream: CountingUpstream;
  url: string;
}

/**
 * For a describe block: toolgate in process enforcing executionPolicy() in
 * front of a counting upstream, its idempotency records in a journal file (a
 * store that outlives the process: without one, keyed non_idempotent_write
 * calls are refused), started before its tests, reset to a quiet upstream
 * before each, closed after. Read the fields inside tests.
 */
export function useExecutionGate(flags: readonly string[] = []): ExecutionGate {
  const gate = {} as ExecutionGate;
  before(async () => {
    gate.setup = await startGateWith(
      startCountingUpstream,
      { 'keys.yaml': KEYS_YAML, 'policy.yaml': executionPolicy() },
      (dir) => ['--idempotency-file', join(dir, 'idempotency.journal'), ...flags],
    );
    gate.upstream = gate.setup.upstream;
    gate.url = gate.setup.gate.url;
  });
  beforeEach(() =>
    Object.assign(gate.upstream.behaviour, { delayMs: 0, fail: () => 0, retryAfter: undefined, progress: 0 }),
  );
  after(() => gate.setup.close());
  return gate;
}
