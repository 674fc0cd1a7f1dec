import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { ResponseCapture } from '../../../src/upstream/capture.ts';
import { callerBudget, callDeadlineMs } from '../../../src/execution/deadline.ts';
import { argumentsDigest, readKey, scopedKey } from '../../../src/execution/idempotency-key.ts';
import { claimOf, MemoryIdempotencyStore } from '../../../src/execution/idempotency-store.ts';
import { RetryBudget } from '../../../src/execution/retry-budget.ts';
import type { Classified } from '../../../src/mcp/classify.ts';

const req = (headers: Record<string, string | string[]>) => ({ headers }) as unknown as IncomingMessage;
const call = (params: Record<string, unknown>) => ({ method: 'tools/call', id: 1, params }) as unknown as Classified;

describe('the caller budget', () => {
  it('reads the header and _meta, keeps the smaller, and refuses what is not whole milliseconds in range', () => {
    assert.deepEqual(callerBudget(req({}), call({})), { ok: true, ms: undefined });
    assert.deepEqual(callerBudget(req({ 'toolgate-timeout-ms': ' 250 ' }), call({})), { ok: true, ms: 250 });
    assert.deepEqual(
      callerBudget(req({ 'toolgate-timeout-ms': '250' }), call({ _meta: { 'io.toolgate/timeoutMs': 90 } })),
      { ok: true, ms: 90 },
    );
    for (const bad of ['-1', '1.5', '', 'soon', '3600001', '1e3'])
      assert.equal(callerBudget(req({ 'toolgate-timeout-ms': bad }), call({})).ok, false, bad);
    for (const bad of [-1, 1.5, '90', null, 3_600_001])
      assert.equal(callerBudget(req({}), call({ _meta: { 'io.toolgate/timeoutMs': bad } })).ok, false, String(bad));
    assert.equal(callDeadlineMs(3000, undefined), 3000);
    assert.equal(callDeadlineMs(3000, 200), 200);
    assert.equal(callDeadlineMs(3000, 9000), 3000);
  });
});

describe('idempotency keys', () => {
  it('reads the header (sf-string or bare), _meta and params.idempotencyKey, and refuses disagreement or bad shapes', () => {
    assert.deepEqual(readKey(req({ 'idempotency-key': '"abc-1"' }), call({})), { kind: 'key', key: 'abc-1' });
    assert.deepEqual(
      readKey(req({ 'idempotency-key': 'abc-1' }), call({ _meta: { 'io.toolgate/idempotencyKey': 'abc-1' } })),
      { kind: 'key', key: 'abc-1' },
    );
    assert.deepEqual(readKey(req({}), call({ idempotencyKey: 'k' })), { kind: 'key', key: 'k' });
    assert.equal(readKey(req({}), call({})).kind, 'none');
    for (const bad of ['""', '"a b"', '"unterminated', 'a\u0001b', 'x'.repeat(256)])
      assert.equal(readKey(req({ 'idempotency-key': bad }), call({})).kind, 'invalid', bad);
    assert.equal(readKey(req({ 'idempotency-key': ['a', 'b'] }), call({})).kind, 'invalid');
    assert.equal(readKey(req({ 'idempotency-key': 'a' }), call({ idempotencyKey: 'b' })).kind, 'invalid');
    const meta = (key: unknown) => ({ _meta: { 'io.toolgate/idempotencyKey': key } });
    assert.equal(
      readKey(req({}), call({ ...meta('a'), idempotencyKey: 'b' })).kind,
      'invalid',
      'meta and params differ',
    );
    assert.deepEqual(readKey(req({ 'idempotency-key': 'k' }), call({ ...meta('k'), idempotencyKey: 'k' })), {
      kind: 'key',
      key: 'k',
    });
    assert.equal(readKey(req({ 'idempotency-key': 'k' }), call(meta('k\u0001'))).kind, 'invalid', 'a malformed copy');
    assert.equal(readKey(req({}), call({ idempotencyKey: 7 })).kind, 'invalid', 'not a string');
    assert.equal(readKey(req({}), call({ ...meta('k'), idempotencyKey: 'k ' })).kind, 'invalid');
  });

  it('scopes keys per principal and tool, and digests arguments canonically', () => {
    assert.notEqual(scopedKey('a', 't', 'k'), scopedKey('b', 't', 'k'));
    assert.notEqual(scopedKey('a', 't', 'k'), scopedKey('a', 'u', 'k'));
    assert.notEqual(scopedKey('a\u0000t', 'x', 'k'), scopedKey('a', 't\u0000x', 'k'));
    assert.equal(
      argumentsDigest({ name: 't', arguments: { b: 1, a: [1.0, 'x'] } }),
      argumentsDigest({ name: 't', arguments: { a: [1, 'x'], b: 1 } }),
    );
    assert.notEqual(
      argumentsDigest({ name: 't', arguments: { a: 1 } }),
      argumentsDigest({ name: 't', arguments: { a: 2 } }),
    );
  });

  it('reads a PENDING record as in progress while its lease runs and as unknown after', () => {
    const pending = { s: 'P', d: 'd1', t: 't' } as const;
    assert.deepEqual(claimOf(pending, 'd1', 500), { kind: 'in_progress', retryAfterMs: 500 });
    assert.deepEqual(claimOf(pending, 'd1', -2), { kind: 'unknown' });
    assert.deepEqual(claimOf(pending, 'd2', 500), { kind: 'reused' });
  });

  it('keeps records in process: claim once, settle only by the holder, free on release', async () => {
    let now = 0;
    const store = new MemoryIdempotencyStore(10_000, () => now);
    const first = await store.claim('s', 'd', 100);
    assert.equal(first.kind, 'acquired');
    assert.equal((await store.claim('s', 'd', 100)).kind, 'in_progress');
    now = 150;
    assert.equal((await store.claim('s', 'd', 100)).kind, 'unknown', 'the lease ran out without a result');
    await store.settle('s', 'not-the-holder', { kind: 'released' });
    assert.equal((await store.claim('s', 'd', 100)).kind, 'unknown');
    if (first.kind !== 'acquired') return;
    await store.settle('s', first.token, {
      kind: 'completed',
      response: { status: 200, message: { jsonrpc: '2.0', id: 1, result: {} } },
    });
    assert.equal((await store.claim('s', 'd', 100)).kind, 'completed');
    now = 20_000;
    assert.equal((await store.claim('s', 'd', 100)).kind, 'acquired', 'retention passed');
  });
});

describe('the retry budget', () => {
  it('allows retries up to the percentage of requests, with a floor, over a sliding window', () => {
    let now = 0;
    const budget = new RetryBudget({ percent: 10, min: 2, windowMs: 1000, now: () => now });
    assert.ok(budget.tryRetry() && budget.tryRetry(), 'the floor');
    assert.equal(budget.tryRetry(), false);
    for (let i = 0; i < 30; i++) budget.request();
    assert.ok(budget.tryRetry(), '3 retries for 30 requests');
    assert.equal(budget.tryRetry(), false);
    now = 1100;
    assert.ok(budget.tryRetry() && budget.tryRetry(), 'the window slid past them');
    assert.equal(budget.tryRetry(), false);
  });
});

describe('capturing the final response', () => {
  const head = { 'content-type': 'text/event-stream' };

  it('keeps the event that answers the request, not progress, across chunk boundaries', () => {
    const c = new ResponseCapture(7, 1024);
    c.head(200, head);
    c.chunk(Buffer.from('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\nda'));
    c.chunk(Buffer.from('ta: {"jsonrpc":"2.0","id":7,"result":{"ok":true}}\n\n'));
    assert.deepEqual(c.result(), {
      kind: 'response',
      response: { status: 200, message: { jsonrpc: '2.0', id: 7, result: { ok: true } } },
    });
  });

  it('reads a JSON body whole, and marks one larger than the bound too large', () => {
    const c = new ResponseCapture('a', 1024);
    c.head(200, { 'content-type': 'application/json' });
    c.chunk(Buffer.from('{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"m"}}'));
    assert.equal(c.result().kind, 'response');
    const big = new ResponseCapture(1, 1024);
    big.head(200, { 'content-type': 'application/json' });
    big.chunk(Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"t":"${'x'.repeat(2000)}"}}`));
    assert.equal(big.result().kind, 'too_large');
    const other = new ResponseCapture(1, 1024);
    other.head(200, { 'content-type': 'application/json' });
    other.chunk(Buffer.from('{"jsonrpc":"2.0","id":2,"result":{}}'));
    assert.equal(other.result().kind, 'none', 'an answer to another id is not this call’s');
  });
});
