import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UpstreamBreaker, type Admission, type Admitted } from '../../../src/execution/breaker.ts';

function clocked(options: { consecutiveFailures?: number; failurePercent?: number; windowCalls?: number } = {}) {
  let now = 0;
  const breaker = new UpstreamBreaker({
    consecutiveFailures: options.consecutiveFailures ?? 3,
    failurePercent: options.failurePercent ?? 0,
    windowCalls: options.windowCalls ?? 10,
    openMs: 1000,
    now: () => now,
  });
  return { breaker, at: (ms: number) => void (now = ms) };
}

/** The admission of a breaker that must answer at once. */
function atOnce(breaker: UpstreamBreaker): Admission {
  const a = breaker.admit();
  assert.ok(!(a instanceof Promise), 'answered at once');
  return a;
}

function admitted(breaker: UpstreamBreaker): Admitted {
  const a = atOnce(breaker);
  assert.ok(a.ok, 'let through');
  return a;
}

/** Fails `n` attempts in a row. */
function fail(breaker: UpstreamBreaker, n: number): void {
  for (let i = 0; i < n; i++) breaker.settle(admitted(breaker), true);
}

describe('UpstreamBreaker', () => {
  it('stays closed below its threshold, and a success starts the count over', () => {
    const { breaker } = clocked();
    fail(breaker, 2);
    breaker.settle(admitted(breaker), false);
    fail(breaker, 2);
    assert.equal(breaker.state, 'closed');
  });

  it('opens at its threshold and refuses until openMs has passed, saying how long is left', () => {
    const c = clocked();
    fail(c.breaker, 3);
    assert.equal(c.breaker.state, 'open');
    c.at(400);
    assert.deepEqual(atOnce(c.breaker), { ok: false, retryAfterMs: 600 });
    c.at(999.5);
    assert.deepEqual(atOnce(c.breaker), { ok: false, retryAfterMs: 1 });
  });

  it('lets one probe through once open long enough; the others wait for its answer, and its success closes it', async () => {
    const c = clocked();
    fail(c.breaker, 3);
    c.at(1000);
    const probe = admitted(c.breaker);
    assert.equal(c.breaker.state, 'half_open');
    const waiting = c.breaker.admit();
    assert.ok(waiting instanceof Promise, 'a second attempt waits for the probe');
    let settled = false;
    void waiting.then(() => (settled = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(settled, false, 'still waiting while the probe is in flight');
    c.breaker.settle(probe, false);
    assert.equal(c.breaker.state, 'closed');
    assert.deepEqual(await waiting, { ok: true, state: 0, probe: undefined });
  });

  it("a probe's failure opens it again for another period, and the waiting attempts are refused", async () => {
    const c = clocked();
    fail(c.breaker, 3);
    c.at(1000);
    const probe = admitted(c.breaker);
    const waiting = c.breaker.admit();
    c.at(1010);
    c.breaker.settle(probe, true);
    assert.equal(c.breaker.state, 'open');
    assert.deepEqual(await waiting, { ok: false, retryAfterMs: 1000 });
    c.at(2010);
    assert.ok(admitted(c.breaker).probe !== undefined, 'the next period probes again');
  });

  it('after a success in half-open, the counting starts from zero', () => {
    const c = clocked();
    fail(c.breaker, 3);
    c.at(1000);
    c.breaker.settle(admitted(c.breaker), false);
    fail(c.breaker, 2);
    assert.equal(c.breaker.state, 'closed');
  });

  it('an attempt let through closed that fails late reopens a half-open breaker, and the stale probe decides nothing', () => {
    const c = clocked({ consecutiveFailures: 1 });
    const old = admitted(c.breaker);
    fail(c.breaker, 1);
    c.at(1000);
    const probe = admitted(c.breaker);
    c.at(1005);
    c.breaker.settle(old, true);
    assert.equal(c.breaker.state, 'open');
    c.breaker.settle(probe, false);
    assert.equal(c.breaker.state, 'open', 'the probe of an ended half-open period does not close it');
    assert.deepEqual(atOnce(c.breaker), { ok: false, retryAfterMs: 1000 });
  });

  it('opens on the failure ratio over its window once enough calls were seen', () => {
    const c = clocked({ consecutiveFailures: 0, failurePercent: 50, windowCalls: 10 });
    for (let i = 0; i < 4; i++) {
      c.breaker.settle(admitted(c.breaker), i % 2 === 0);
    }
    assert.equal(c.breaker.state, 'closed', 'fewer than half the window seen');
    c.breaker.settle(admitted(c.breaker), false);
    assert.equal(c.breaker.state, 'closed', '2 failures of 5');
    c.breaker.settle(admitted(c.breaker), true);
    assert.equal(c.breaker.state, 'closed', '3 failures of 6 is not over half');
    c.breaker.settle(admitted(c.breaker), true);
    assert.equal(c.breaker.state, 'open', '4 failures of 7');
  });

  it('with both rules off, nothing opens it', () => {
    const c = clocked({ consecutiveFailures: 0, failurePercent: 0 });
    fail(c.breaker, 50);
    assert.equal(c.breaker.state, 'closed');
  });
});
