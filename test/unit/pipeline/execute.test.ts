import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, describe, it } from 'node:test';
import { Pool } from 'undici';
import type { CatalogueView } from '../../../src/catalogue/view.ts';
import { parsePolicy } from '../../../src/config/policy/policy.ts';
import { UpstreamBreaker } from '../../../src/execution/breaker.ts';
import { ConcurrencyLimits } from '../../../src/execution/concurrency.ts';
import { argumentsDigest, scopedKey } from '../../../src/execution/idempotency-key.ts';
import { MemoryIdempotencyStore, type RecordJournal } from '../../../src/execution/idempotency-store.ts';
import { RetryBudget } from '../../../src/execution/retry-budget.ts';
import { MemoryTaskStore } from '../../../src/execution/task-store.ts';
import type { Execution } from '../../../src/execution/wiring.ts';
import { emptySnapshot } from '../../../src/grants/snapshot.ts';
import type { Exchange } from '../../../src/interceptors/contract.ts';
import { classify } from '../../../src/mcp/classify.ts';
import { toolCall } from '../../../src/mcp/tool-call.ts';
import { executeStage } from '../../../src/pipeline/stages/execute.ts';
import { SchemaCache } from '../../../src/validation/cache.ts';

/**
 * The execute stage without a socket: every case here ends before the
 * upstream. The pool points at a port nothing listens on, so a call that
 * reached it would end as upstream_unavailable, never as the refusal or
 * replay each case expects.
 */

const parsed = parsePolicy(`
version: 1
grants: []
tools:
  refund: { sideEffect: non_idempotent_write, timeoutMs: 3000, maxConcurrent: 1 }
  update: { sideEffect: idempotent_write, timeoutMs: 3000 }
`);
assert.ok(parsed.ok);
const POLICY = parsed.policy;
const PRINCIPAL = { id: 'alice', scopes: new Set<string>(), credentialStrength: 'static' as const };
const SECRET_ARG = 'card-4111-secret';

const pool = new Pool('http://127.0.0.1:9');
after(() => pool.close());

/** A durable journal that keeps nothing: the stage only asks whether records survive a restart. */
const KEEPING: RecordJournal = { write: async () => undefined, close: async () => undefined };

function execution(durable: boolean): Execution {
  return {
    upstream: {
      pool,
      breaker: new UpstreamBreaker({ consecutiveFailures: 5, failurePercent: 0, windowCalls: 10, openMs: 1000 }),
      budget: new RetryBudget({ percent: 20, min: 10, windowMs: 10_000, now: () => performance.now() }),
      backoffMs: 10,
    },
    idempotency: new MemoryIdempotencyStore(60_000, Date.now, durable ? KEEPING : undefined),
    concurrency: new ConcurrencyLimits(),
    maxResultBytes: 1 << 20,
    defaultTimeoutMs: 3000,
    tasks: new MemoryTaskStore(10),
  };
}

/** What a stage wrote: the one status, headers and body a ServerResponse would carry. */
class Written {
  status = 0;
  headers: Record<string, unknown> = {};
  body = '';
  headersSent = false;
  destroyed = false;

  writeHead(status: number, headers: Record<string, unknown>): this {
    assert.equal(this.headersSent, false, 'one head per response');
    this.status = status;
    this.headers = headers;
    this.headersSent = true;
    return this;
  }

  end(body?: string): this {
    this.body += body ?? '';
    return this;
  }

  json(): {
    id: unknown;
    result?: {
      isError?: boolean;
      content?: { text: string }[];
      structuredContent?: Record<string, unknown>;
      _meta?: Record<string, unknown>;
    };
    error?: { data?: Record<string, unknown> };
  } {
    return JSON.parse(this.body);
  }
}

function exchange(
  tool: string,
  headers: Record<string, string> = {},
  meta?: Record<string, unknown>,
): { ex: Exchange; body: Buffer } {
  const body = Buffer.from(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: tool, arguments: { card: SECRET_ARG }, ...(meta !== undefined && { _meta: meta }) },
    }),
  );
  const message = classify({}, body);
  assert.ok(message.ok);
  const request = { headers, method: 'POST', url: '/mcp' } as unknown as IncomingMessage;
  const ex: Exchange = {
    request,
    message,
    principal: PRINCIPAL,
    policy: POLICY,
    snapshot: emptySnapshot(PRINCIPAL.id),
    catalogue: { get: () => undefined } as unknown as CatalogueView,
    rowsForTool: async () => undefined,
  };
  return { ex, body };
}

async function run(
  deps: Execution,
  tool: string,
  headers: Record<string, string> = {},
  meta?: Record<string, unknown>,
): Promise<{ outcome: string; written: Written }> {
  const stage = executeStage(deps, 'result', { schemas: () => new SchemaCache(), toolErrors: 'result' });
  const { ex, body } = exchange(tool, headers, meta);
  const written = new Written();
  const outcome = await stage(ex, written as unknown as ServerResponse, [], body);
  return { outcome, written };
}

/** A refusal as the model reads it: a tool result with isError, its code in structuredContent, no argument echoed. */
function refusedAs(written: Written, code: string): Record<string, unknown> {
  assert.equal(written.status, 200);
  const answer = written.json();
  assert.equal(answer.id, 7);
  assert.equal(answer.result?.isError, true);
  assert.equal(answer.result?.structuredContent?.code, code);
  assert.ok(!written.body.includes(SECRET_ARG), 'no argument is echoed');
  return answer.result?.structuredContent ?? {};
}

describe('the execute stage', () => {
  it('refuses a caller budget that is not a whole number of milliseconds', async () => {
    const { outcome, written } = await run(execution(true), 'update', { 'toolgate-timeout-ms': '1.5' });
    assert.equal(outcome, 'invalid_timeout');
    refusedAs(written, 'invalid_timeout');
  });

  it('answers a spent budget as deadline_exceeded, not started, without calling the upstream', async () => {
    const { outcome, written } = await run(execution(true), 'update', { 'toolgate-timeout-ms': '0' });
    assert.equal(outcome, 'deadline_exceeded');
    const data = refusedAs(written, 'deadline_exceeded');
    assert.equal(data.outcome, 'not_started');
  });

  it("refuses a call past the tool's concurrency as rate_limited, with when to come back", async () => {
    const deps = execution(true);
    assert.ok(deps.concurrency.tryAcquire('refund', 1));
    const { outcome, written } = await run(deps, 'refund', { 'idempotency-key': 'k1' });
    assert.equal(outcome, 'rate_limited');
    refusedAs(written, 'rate_limited');
    assert.match(written.body, /retryAfterMs/);
  });

  it('refuses a keyed non-idempotent write when records would not survive a restart', async () => {
    const { outcome, written } = await run(execution(false), 'refund', { 'idempotency-key': 'k1' });
    assert.equal(outcome, 'idempotency_not_durable');
    refusedAs(written, 'idempotency_not_durable');
  });

  it('refuses a key another run still holds, with its lease as the retry time', async () => {
    const deps = execution(true);
    const { ex } = exchange('update');
    const scope = scopedKey(PRINCIPAL.id, 'update', 'k2');
    const held = await deps.idempotency.claim(scope, argumentsDigest(toolCall(ex.message)), 5000);
    assert.equal(held.kind, 'acquired');
    const { outcome, written } = await run(deps, 'update', { 'idempotency-key': 'k2' });
    assert.equal(outcome, 'call_in_progress');
    refusedAs(written, 'call_in_progress');
  });

  it("replays the stored answer of a completed key under this request's id, marked as a replay", async () => {
    const deps = execution(true);
    const { ex } = exchange('update');
    const scope = scopedKey(PRINCIPAL.id, 'update', 'k3');
    const claim = await deps.idempotency.claim(scope, argumentsDigest(toolCall(ex.message)), 5000);
    assert.ok(claim.kind === 'acquired');
    const stored = {
      status: 200,
      message: { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'refunded' }] } },
    };
    await deps.idempotency.settle(scope, claim.token, { kind: 'completed', response: stored });
    const { outcome, written } = await run(deps, 'update', {}, { 'io.toolgate/idempotencyKey': 'k3' });
    assert.equal(outcome, 'answered');
    assert.equal(written.status, 200);
    assert.equal(written.headers['idempotent-replayed'], 'true');
    const answer = written.json();
    assert.equal(answer.id, 7);
    assert.equal(answer.result?.content?.[0]?.text, 'refunded');
    assert.equal(answer.result?._meta?.['io.toolgate/replayed'], true);
  });

  it('refuses the same key with other arguments as reused', async () => {
    const deps = execution(true);
    const scope = scopedKey(PRINCIPAL.id, 'update', 'k4');
    const claim = await deps.idempotency.claim(
      scope,
      argumentsDigest({ name: 'update', arguments: { card: 'other' } }),
      5000,
    );
    assert.ok(claim.kind === 'acquired');
    const { outcome, written } = await run(deps, 'update', { 'idempotency-key': 'k4' });
    assert.equal(outcome, 'idempotency_key_reused');
    refusedAs(written, 'idempotency_key_reused');
  });
});
