import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { CountingUpstream } from '../helpers/counting-upstream.ts';
import { AGENT_KEY, toolCall, useExecutionGate } from '../helpers/execution-policy.ts';
import { metricValue } from '../helpers/metrics.ts';
import type { PolicyGate } from '../helpers/policy-gate.ts';
import { passed, post, refusalOf, refusedCall } from '../helpers/raw.ts';
import { waitFor } from '../helpers/wait.ts';

const agent = { authorization: `Bearer ${AGENT_KEY}` };
/** The breaker stays out of the retry tests: nothing opens it. */
const NO_BREAKER = ['--breaker-consecutive-failures', '0', '--breaker-failure-percent', '0'];

describe('retries only when safe, within the retry budget', () => {
  const gate = useExecutionGate([
    ...NO_BREAKER,
    '--retry-budget-min',
    '5',
    '--retry-budget-percent',
    '10',
    '--retry-backoff-ms',
    '1',
  ]);
  let setup: PolicyGate<CountingUpstream>;
  let upstream: CountingUpstream;
  let url: string;
  before(() => ({ setup, upstream, url } = gate));

  it('retries a read-only call after a 503 or a cut connection, and the caller sees only the success', async () => {
    for (const failure of [503, -1, 502, 504]) {
      const first = upstream.attempts() + 1;
      upstream.behaviour.fail = (n) => (n === first ? failure : 0);
      const res = await post(url, toolCall(1, 'read_status'), agent);
      assert.ok(passed(res), `${failure}: ${res.text}`);
      assert.equal(upstream.attempts(), first + 1, `${failure}: one retry`);
    }
    assert.ok(
      (await metricValue(setup.gate.adminUrl, 'toolgate_upstream_retries_total', {
        reason: 'status_503',
        outcome: 'retried',
      })) >= 1,
    );
    assert.ok(
      (await metricValue(setup.gate.adminUrl, 'toolgate_upstream_retries_total', {
        reason: 'connect',
        outcome: 'retried',
      })) >= 1,
    );
  });

  it('never retries other answers (4xx, 500), whatever the tool', async () => {
    for (const failure of [400, 404, 409, 500]) {
      const attempts = upstream.attempts();
      upstream.behaviour.fail = () => failure;
      const res = await post(url, toolCall(2, 'read_status'), agent);
      assert.equal(res.status, failure);
      assert.equal(upstream.attempts(), attempts + 1, `${failure} is answered as it came`);
    }
  });

  it('never retries a non_idempotent_write without a key, and retries a keyed one that the policy allows', async () => {
    upstream.behaviour.fail = () => 503;
    const attempts = upstream.attempts();
    assert.equal((await post(url, toolCall(3, 'refund_payment'), agent)).status, 503);
    assert.equal(upstream.attempts(), attempts + 1);
    const first = upstream.attempts() + 1;
    upstream.behaviour.fail = (n) => (n === first ? 503 : 0);
    const keyed = await post(url, toolCall(4, 'send_mail', { n: 4 }), {
      ...agent,
      'idempotency-key': `retry-${process.pid}`,
    });
    assert.ok(passed(keyed), keyed.text);
    assert.equal(upstream.attempts(), first + 1);
    const sent = (upstream.lastHeaders()['idempotency-key'] as string).slice(1, -1);
    assert.equal(upstream.byKey.get(sent), 1, 'run once');
  });

  it('does not retry when the wait would pass the deadline (Retry-After longer than the time left)', async () => {
    upstream.behaviour.fail = () => 503;
    upstream.behaviour.retryAfter = '30';
    const attempts = upstream.attempts();
    const res = await post(url, toolCall(5, 'read_status'), agent);
    assert.equal(res.status, 503);
    assert.equal(upstream.attempts(), attempts + 1);
    upstream.behaviour.retryAfter = '1';
    const budgeted = await post(url, toolCall(6, 'read_status'), { ...agent, 'toolgate-timeout-ms': '500' });
    assert.equal(budgeted.status, 503);
    assert.equal(upstream.attempts(), attempts + 2, 'a one-second Retry-After does not fit a 500 ms budget');
  });

  it('with half the upstream requests failing, keeps retries within 10% of requests (plus the floor) and counts the rest', async () => {
    upstream.behaviour.fail = (n) => (n % 2 === 1 ? 503 : 0);
    // A fresh window for the budget.
    await new Promise((r) => setTimeout(r, 10_100));
    const attempts = upstream.attempts();
    const calls = 80;
    for (let i = 0; i < calls; i++) await post(url, toolCall(100 + i, 'read_status'), agent);
    const retries = upstream.attempts() - attempts - calls;
    assert.ok(retries > 0, 'some retries were made');
    assert.ok(retries <= Math.ceil(calls * 0.1) + 5, `${retries} retries for ${calls} calls`);
    assert.ok(
      (await metricValue(setup.gate.adminUrl, 'toolgate_upstream_retries_total', {
        reason: 'status_503',
        outcome: 'budget_exhausted',
      })) > 0,
    );
  });
});

describe('the upstream circuit breaker', () => {
  const gate = useExecutionGate([
    '--breaker-consecutive-failures',
    '3',
    '--breaker-failure-percent',
    '0',
    '--breaker-open-ms',
    '400',
    '--retry-budget-percent',
    '0',
    '--retry-budget-min',
    '0',
  ]);
  let setup: PolicyGate<CountingUpstream>;
  let upstream: CountingUpstream;
  let url: string;
  before(() => ({ setup, upstream, url } = gate));

  const state = () => metricValue(setup.gate.adminUrl, 'toolgate_upstream_breaker_state');

  it('opens after its threshold, refuses at once with 503 upstream_unavailable and retryAfterMs, half-opens, and closes on success', async () => {
    upstream.behaviour.fail = () => 503;
    for (let i = 0; i < 3; i++) assert.equal((await post(url, toolCall(i, 'read_status'), agent)).status, 503);
    assert.equal(await state(), 2, 'open');
    const attempts = upstream.attempts();
    const refused = await post(url, toolCall(10, 'refund_payment', { text: 'canary-breaker' }), agent);
    const data = refusedCall(refused, 'upstream_unavailable');
    assert.equal(data.retryable, true);
    const retryAfterMs = Number(data.retryAfterMs);
    assert.ok(retryAfterMs > 0 && retryAfterMs <= 400, String(retryAfterMs));
    assert.match(refusalOf(refused)?.text ?? '', /calls to it are paused\. Wait 1 s/);
    assert.ok(!refused.text.includes('canary-breaker'));
    assert.equal(upstream.attempts(), attempts, 'nothing reached the upstream while open');

    // Half-open: one probe goes through; it fails, so the breaker opens again.
    await new Promise((r) => setTimeout(r, retryAfterMs + 20));
    assert.equal((await post(url, toolCall(11, 'read_status'), agent)).status, 503);
    assert.equal(upstream.attempts(), attempts + 1, 'exactly one probe');
    assert.equal(await state(), 2);

    upstream.behaviour.fail = () => 0;
    await waitFor(async () => passed(await post(url, toolCall(12, 'read_status'), agent)), 'a probe to succeed');
    assert.equal(await state(), 0, 'closed');
    assert.ok(passed(await post(url, toolCall(13, 'read_status'), agent)));
  });

  it('does not count a caller budget running out against the upstream', async () => {
    upstream.behaviour.delayMs = 300;
    for (let i = 0; i < 4; i++)
      refusedCall(
        await post(url, toolCall(20 + i, 'read_status'), { ...agent, 'toolgate-timeout-ms': '20' }),
        'deadline_exceeded',
      );
    assert.equal(await state(), 0);
  });
});
