import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RedisBreaker, RedisBreakerOpenError, breakerOf } from '../../../src/cache/breaker.ts';
import { RedisDeadlineError } from '../../../src/cache/deadline.ts';

function clocked() {
  let now = 0;
  const breaker = new RedisBreaker({ probeMs: 1000, now: () => now });
  let sent = 0;
  const answer = (value: string) => () => {
    sent++;
    return Promise.resolve(value);
  };
  const stall = () => {
    sent++;
    return Promise.reject(new RedisDeadlineError('redis command deadline passed'));
  };
  return { breaker, answer, stall, sent: () => sent, at: (ms: number) => void (now = ms) };
}

describe('RedisBreaker', () => {
  it('is closed until a command stalls, and answers pass through', async () => {
    const c = clocked();
    assert.equal(await c.breaker.run(100, c.answer('a')), 'a');
    assert.equal(c.breaker.open, false);
  });

  it('after a stall, refuses without sending until the probe period passes', async () => {
    const c = clocked();
    await assert.rejects(c.breaker.run(100, c.stall), RedisDeadlineError);
    assert.equal(c.breaker.open, true);
    c.at(999);
    await assert.rejects(c.breaker.run(100, c.answer('b')), RedisBreakerOpenError);
    assert.equal(c.sent(), 1, 'the refused call sent nothing');
  });

  it("lets one call probe while the others keep being refused, and the probe's answer closes it", async () => {
    const c = clocked();
    await assert.rejects(c.breaker.run(100, c.stall));
    c.at(1000);
    let release!: (v: string) => void;
    const probe = c.breaker.run(100, () => new Promise<string>((r) => (release = r)));
    await assert.rejects(c.breaker.run(100, c.answer('c')), RedisBreakerOpenError);
    release('probe');
    assert.equal(await probe, 'probe');
    assert.equal(c.breaker.open, false);
    assert.equal(await c.breaker.run(100, c.answer('d')), 'd');
  });

  it('a probe that stalls again keeps it open for another period', async () => {
    const c = clocked();
    await assert.rejects(c.breaker.run(100, c.stall));
    c.at(1000);
    await assert.rejects(c.breaker.run(100, c.stall), RedisDeadlineError);
    c.at(1999);
    await assert.rejects(c.breaker.run(100, c.answer('e')), RedisBreakerOpenError);
    c.at(2000);
    assert.equal(await c.breaker.run(100, c.answer('f')), 'f');
  });

  it('an error reply or a closed connection does not open it: those fail fast already', async () => {
    const c = clocked();
    await assert.rejects(c.breaker.run(100, () => Promise.reject(new Error('NOSCRIPT No matching script'))));
    await assert.rejects(c.breaker.run(100, () => Promise.reject(new Error('Connection is closed.'))));
    assert.equal(c.breaker.open, false);
  });

  it("ioredis' own command timeout counts as a stall", async () => {
    const c = clocked();
    await assert.rejects(c.breaker.run(100, () => Promise.reject(new Error('Command timed out'))));
    assert.equal(c.breaker.open, true);
  });

  it('is shared by every caller of one client, and separate per client', () => {
    const one = {};
    assert.equal(breakerOf(one), breakerOf(one));
    assert.notEqual(breakerOf(one), breakerOf({}));
  });
});
