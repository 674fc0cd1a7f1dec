import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { CountingUpstream } from '../helpers/counting-upstream.ts';
import { AGENT_KEY, toolCall, useExecutionGate } from '../helpers/execution-policy.ts';
import { post, refusalOf, refusedCall } from '../helpers/raw.ts';
import { waitFor } from '../helpers/wait.ts';

const CANARY = 'canary-deadline-7f3a';
const agent = { authorization: `Bearer ${AGENT_KEY}` };

describe('deadlines on tools/call, in front of a real upstream that counts', () => {
  const gate = useExecutionGate();
  let upstream: CountingUpstream;
  let url: string;
  before(() => ({ upstream, url } = gate));

  it('answers 504 deadline_exceeded when the caller budget runs out, aborts the upstream, and says the outcome of a write is unknown', async () => {
    upstream.behaviour.delayMs = 2000;
    const aborted = upstream.aborted();
    const res = await post(url, toolCall(1, 'refund_payment', { text: CANARY }), {
      ...agent,
      'toolgate-timeout-ms': '200',
    });
    const data = refusedCall(res, 'deadline_exceeded');
    assert.equal(data.outcome, 'unknown');
    assert.equal(data.retryable, true);
    assert.match(refusalOf(res)?.text ?? '', /may have run/);
    assert.ok(!res.text.includes(CANARY));
    // The upstream sees its connection closed, not just toolgate stop waiting.
    await waitFor(() => upstream.aborted() === aborted + 1, 'the upstream to see the abort');
  });

  it('says nothing about the outcome of a read-only call, and takes the budget from _meta too', async () => {
    upstream.behaviour.delayMs = 2000;
    const res = await post(url, toolCall(2, 'read_status', {}, { 'io.toolgate/timeoutMs': 150 }), agent);
    assert.equal(refusedCall(res, 'deadline_exceeded').outcome, undefined);
  });

  it("uses the tool's own timeout when the caller sends none, and the smaller of the two when it does", async () => {
    upstream.behaviour.delayMs = 50;
    for (const res of [
      await post(url, toolCall(3, 'read_status'), agent),
      await post(url, toolCall(4, 'read_status'), { ...agent, 'toolgate-timeout-ms': '600000' }),
    ]) {
      assert.equal(res.status, 200);
      assert.equal(refusalOf(res), undefined, res.text);
    }
  });

  it('does not forward a call whose budget is already spent', async () => {
    const attempts = upstream.attempts();
    const res = await post(url, toolCall(5, 'refund_payment'), { ...agent, 'toolgate-timeout-ms': '0' });
    assert.equal(refusedCall(res, 'deadline_exceeded').outcome, 'not_started');
    assert.equal(upstream.attempts(), attempts, 'never sent');
  });

  for (const [what, headers, meta] of [
    ['a header that is not a number', { 'toolgate-timeout-ms': `1${CANARY}` }, undefined],
    ['a negative _meta budget', {}, { 'io.toolgate/timeoutMs': -1 }],
    ['a _meta budget that is a string', {}, { 'io.toolgate/timeoutMs': CANARY }],
    ['a budget beyond an hour', { 'toolgate-timeout-ms': '3600001' }, undefined],
  ] as const) {
    it(`refuses ${what}: 400 invalid_timeout, not forwarded, nothing echoed`, async () => {
      const attempts = upstream.attempts();
      const res = await post(url, toolCall(6, 'read_status', { text: CANARY }, meta), { ...agent, ...headers });
      refusedCall(res, 'invalid_timeout');
      assert.ok(!res.text.includes(CANARY));
      assert.equal(upstream.attempts(), attempts);
    });
  }

  it('covers a streamed result: progress extends it only where the policy says resetTimeoutOnProgress', async () => {
    // 6 progress events over 900 ms against a 400 ms deadline.
    Object.assign(upstream.behaviour, { delayMs: 900, progress: 6 });
    const extended = await post(url, toolCall(7, 'stream_report', {}, { progressToken: 'p1' }), agent);
    assert.equal(extended.status, 200);
    assert.match(extended.text, /ran stream_report/);
    const aborted = upstream.aborted();
    const cut = await post(url, toolCall(8, 'stream_export', {}, { progressToken: 'p2' }), agent).catch(
      () => undefined,
    );
    // The head went out with the stream, so the deadline can only cut it: no final result reaches the client.
    assert.ok(cut === undefined || !cut.text.includes('ran stream_export'), cut?.text);
    await waitFor(() => upstream.aborted() === aborted + 1, 'the upstream to see the streamed call aborted');
  });

  it('answers calls past maxConcurrent in flight with 429 rate_limited and Retry-After, and frees the slots after', async () => {
    upstream.behaviour.delayMs = 500;
    const attempts = upstream.attempts();
    const answers = await Promise.all(
      [1, 2, 3, 4].map((i) => post(url, toolCall(20 + i, 'update_record', { n: i }), agent)),
    );
    assert.deepEqual(
      answers.map((r) => r.status),
      [200, 200, 200, 200],
    );
    const refused = answers.filter((r) => refusalOf(r) !== undefined);
    assert.equal(refused.length, 2);
    for (const r of refused) assert.equal(refusedCall(r, 'rate_limited').retryAfterMs, 1000);
    assert.equal(upstream.attempts(), attempts + 2);
    upstream.behaviour.delayMs = 0;
    assert.equal((await post(url, toolCall(30, 'update_record'), agent)).status, 200);
  });
});
