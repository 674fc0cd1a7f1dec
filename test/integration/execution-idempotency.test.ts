import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { CountingUpstream } from '../helpers/counting-upstream.ts';
import { AGENT_KEY, OTHER_KEY, toolCall, useExecutionGate } from '../helpers/execution-policy.ts';
import { post, refusalOf, refusedCall } from '../helpers/raw.ts';

const CANARY = 'canary-idem-2b8d';
const agent = { authorization: `Bearer ${AGENT_KEY}` };
const other = { authorization: `Bearer ${OTHER_KEY}` };
let serial = 0;
const freshKey = () => `key-${process.pid}-${++serial}`;

describe('idempotency keys on tools/call (in-process records), in front of a real upstream that counts', () => {
  const gate = useExecutionGate();
  let upstream: CountingUpstream;
  let url: string;
  before(() => ({ upstream, url } = gate));

  it('runs a keyed call once and replays its stored result, marked as a replay, without reaching the upstream', async () => {
    const key = freshKey();
    const first = await post(url, toolCall(1, 'refund_payment', { n: 1 }), { ...agent, 'idempotency-key': `"${key}"` });
    assert.equal(first.status, 200, first.text);
    const executions = upstream.executions();
    const attempts = upstream.attempts();
    // The same call in another key order and through the _meta field: the same digest, the same key.
    const again = await post(
      url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 'two',
        method: 'tools/call',
        params: { arguments: { n: 1.0 }, _meta: { 'io.toolgate/idempotencyKey': key }, name: 'refund_payment' },
      }),
      agent,
    );
    assert.equal(again.status, 200, again.text);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    const body = again.json();
    assert.equal(body.id, 'two', 'the replay answers the repeat, under its own id');
    const result = body.result as { content: unknown; _meta?: Record<string, unknown> };
    assert.deepEqual(result.content, (first.json().result as { content: unknown }).content);
    assert.equal(result._meta?.['io.toolgate/replayed'], true);
    assert.equal(upstream.executions(), executions);
    assert.equal(upstream.attempts(), attempts);
  });

  it('sends the upstream a key scoped to the caller and tool, in the header and in _meta', async () => {
    const key = freshKey();
    assert.equal(
      (await post(url, toolCall(2, 'refund_payment', { n: 2 }), { ...agent, 'idempotency-key': key })).status,
      200,
    );
    const sent = upstream.lastHeaders()['idempotency-key'] as string;
    assert.match(sent, /^"[0-9a-f]{64}"$/);
    assert.ok(!sent.includes(key));
    assert.equal(upstream.byKey.get(sent.slice(1, -1)), 1);
  });

  it('keeps keys apart per principal: the same key from another caller is another call', async () => {
    const key = freshKey();
    const executions = upstream.executions();
    assert.equal(
      (await post(url, toolCall(3, 'refund_payment', { n: 3 }), { ...agent, 'idempotency-key': key })).status,
      200,
    );
    const theirs = await post(url, toolCall(4, 'refund_payment', { n: 3 }), { ...other, 'idempotency-key': key });
    assert.equal(theirs.status, 200);
    assert.equal(theirs.headers['idempotent-replayed'], undefined);
    assert.equal(upstream.executions(), executions + 2);
  });

  it('refuses the same key with other arguments: 422 idempotency_key_reused, nothing run, nothing echoed', async () => {
    const key = freshKey();
    assert.equal(
      (await post(url, toolCall(5, 'refund_payment', { n: 5 }), { ...agent, 'idempotency-key': key })).status,
      200,
    );
    const executions = upstream.executions();
    const res = await post(url, toolCall(6, 'refund_payment', { n: 6, text: CANARY }), {
      ...agent,
      'idempotency-key': key,
    });
    refusedCall(res, 'idempotency_key_reused');
    assert.ok(!res.text.includes(CANARY));
    assert.equal(upstream.executions(), executions);
  });

  it('answers a repeat while the first is running with 409 call_in_progress and a retry time', async () => {
    upstream.behaviour.delayMs = 600;
    const key = freshKey();
    const first = post(url, toolCall(7, 'refund_payment', { n: 7 }), { ...agent, 'idempotency-key': key });
    await new Promise((r) => setTimeout(r, 150));
    const repeat = await post(url, toolCall(8, 'refund_payment', { n: 7 }), { ...agent, 'idempotency-key': key });
    const data = refusedCall(repeat, 'call_in_progress');
    assert.equal(data.retryable, true);
    assert.ok(Number(data.retryAfterMs) > 0);
    assert.match(refusalOf(repeat)?.text ?? '', /Wait \d+ s/);
    assert.equal((await first).status, 200);
    const upKey = (upstream.lastHeaders()['idempotency-key'] as string).slice(1, -1);
    assert.equal(upstream.byKey.get(upKey), 1);
  });

  it('never runs a write again after its deadline passed mid-call: the repeat gets 409 outcome_unknown', async () => {
    upstream.behaviour.delayMs = 1000;
    const key = freshKey();
    const cut = await post(url, toolCall(9, 'refund_payment', { n: 9 }), {
      ...agent,
      'idempotency-key': key,
      'toolgate-timeout-ms': '150',
    });
    assert.equal(refusedCall(cut, 'deadline_exceeded').outcome, 'unknown');
    const executions = upstream.executions();
    const repeat = await post(url, toolCall(10, 'refund_payment', { n: 9 }), { ...agent, 'idempotency-key': key });
    assert.equal(refusedCall(repeat, 'outcome_unknown').retryable, false);
    assert.equal(upstream.executions(), executions);
  });

  it('frees the key when the upstream said it did not run the call (503), so the repeat runs', async () => {
    upstream.behaviour.fail = () => 503;
    const key = freshKey();
    const refused = await post(url, toolCall(11, 'refund_payment', { n: 11 }), { ...agent, 'idempotency-key': key });
    assert.equal(refused.status, 503);
    upstream.behaviour.fail = () => 0;
    const repeat = await post(url, toolCall(12, 'refund_payment', { n: 11 }), { ...agent, 'idempotency-key': key });
    assert.equal(repeat.status, 200, repeat.text);
    assert.equal(repeat.headers['idempotent-replayed'], undefined);
  });

  for (const [what, headers, meta] of [
    ['without a key', {}, undefined],
    ['with an empty key', { 'idempotency-key': '""' }, undefined],
    ['with a key holding a control character', { 'idempotency-key': `"a\tb"` }, undefined],
    ['with two different keys', { 'idempotency-key': 'one' }, { 'io.toolgate/idempotencyKey': 'two' }],
    ['with a key that is not a string', {}, { 'io.toolgate/idempotencyKey': 42 }],
  ] as const) {
    it(`refuses a non-idempotent call whose policy requires a key ${what}: 400 idempotency_key_required, not forwarded`, async () => {
      const attempts = upstream.attempts();
      const res = await post(url, toolCall(13, 'send_mail', { text: CANARY }, meta), { ...agent, ...headers });
      refusedCall(res, 'idempotency_key_required');
      assert.ok(!res.text.includes(CANARY));
      assert.equal(upstream.attempts(), attempts);
    });
  }

  it('runs a required-key call that carries one', async () => {
    const res = await post(url, toolCall(14, 'send_mail', { n: 14 }), { ...agent, 'idempotency-key': freshKey() });
    assert.equal(res.status, 200, res.text);
  });
});
