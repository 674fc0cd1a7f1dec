import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePolicy, type Policy } from '../../../src/config/policy/policy.ts';
import { rateLimitInterceptor } from '../../../src/interceptors/rate-limit/interceptor.ts';
import { TokenBuckets, type BucketLimit } from '../../../src/interceptors/rate-limit/buckets.ts';
import { dryRunRequest } from '../../../src/interceptors/dry-run.ts';
import type { Exchange, Verdict } from '../../../src/interceptors/contract.ts';

const limit = (burst: number, msPerCall: number, key = `${burst}/${msPerCall}`): BucketLimit => ({
  key,
  burst,
  msPerCall,
});

describe('token buckets', () => {
  it('admits a burst, then refuses with the time until one call is earned back, then admits again', () => {
    let now = 1000;
    const buckets = new TokenBuckets(() => now);
    const l = [limit(2, 500)];
    assert.deepEqual(buckets.take(l, 'alice', true), { ok: true });
    assert.deepEqual(buckets.take(l, 'alice', true), { ok: true });
    assert.deepEqual(buckets.take(l, 'alice', true), { ok: false, retryAfterMs: 500 });
    now += 200;
    assert.deepEqual(buckets.take(l, 'alice', true), { ok: false, retryAfterMs: 300 });
    now += 300;
    assert.deepEqual(buckets.take(l, 'alice', true), { ok: true });
    assert.deepEqual(buckets.take(l, 'bob', true), { ok: true }, 'each subject has its own bucket');
    now += 60_000;
    assert.deepEqual(buckets.take(l, 'alice', true), { ok: true });
    assert.deepEqual(buckets.take(l, 'alice', true), { ok: true });
    assert.equal(buckets.take(l, 'alice', true).ok, false, 'an idle bucket refills to its burst, not beyond');
  });

  it('takes from every limit only when all admit, and waits for the slowest', () => {
    let now = 0;
    const buckets = new TokenBuckets(() => now);
    const fast = limit(5, 100, 'fast');
    const slow = limit(1, 10_000, 'slow');
    assert.equal(buckets.take([fast, slow], 'a', true).ok, true);
    assert.deepEqual(buckets.take([fast, slow], 'a', true), { ok: false, retryAfterMs: 10_000 });
    // The refused call took nothing from the fast bucket: four calls remain there.
    for (let i = 0; i < 4; i++) assert.equal(buckets.take([fast], 'a', true).ok, true, `call ${i}`);
    assert.equal(buckets.take([fast], 'a', true).ok, false);
    now += 10_000;
    assert.equal(buckets.take([fast, slow], 'a', true).ok, true);
  });

  it('a look without consuming changes nothing', () => {
    const buckets = new TokenBuckets(() => 0);
    const l = [limit(1, 1000)];
    for (let i = 0; i < 3; i++) assert.equal(buckets.take(l, 'a', false).ok, true);
    assert.equal(buckets.size, 0);
    assert.equal(buckets.take(l, 'a', true).ok, true);
    assert.equal(buckets.take(l, 'a', false).ok, false);
  });

  it('stays within its bound by forgetting the least recently used bucket, which comes back full', () => {
    const buckets = new TokenBuckets(() => 0, 2);
    const l = [limit(1, 1000)];
    for (const who of ['a', 'b', 'c']) assert.equal(buckets.take(l, who, true).ok, true);
    assert.equal(buckets.size, 2);
    assert.equal(buckets.take(l, 'c', true).ok, false);
    assert.equal(buckets.take(l, 'a', true).ok, true, 'a was forgotten');
  });
});

describe('the rate_limit interceptor', () => {
  const policy = (rules: string): Policy => {
    const r = parsePolicy(`version: 1\nrateLimits:\n${rules}`);
    assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
    return r.policy;
  };
  const exchange = (p: Policy, principal: string, tool: string, request = { headers: {} }): Exchange =>
    ({
      request,
      policy: p,
      principal: { id: principal, scopes: new Set(), credentialStrength: 'static' },
      message: { name: tool },
    }) as unknown as Exchange;
  const code = (v: Verdict | Promise<Verdict>) =>
    (v as Verdict).kind === 'deny' ? (v as Extract<Verdict, { kind: 'deny' }>).error : 'pass';

  it('applies every rule naming the principal (or *) and the tool (or *), per principal', () => {
    const p = policy(
      '  - { principal: "*", tool: "*", requests: 2, per: hour }\n  - { principal: alice, tool: delete_repo, requests: 1, per: hour }\n',
    );
    const rl = rateLimitInterceptor(new TokenBuckets(() => 0));
    assert.equal(code(rl.intercept(exchange(p, 'alice', 'delete_repo'))), 'pass');
    assert.equal(code(rl.intercept(exchange(p, 'alice', 'delete_repo'))), 'rate_limited', 'the tool rule');
    assert.equal(code(rl.intercept(exchange(p, 'alice', 'search'))), 'pass');
    assert.equal(
      code(rl.intercept(exchange(p, 'alice', 'search'))),
      'rate_limited',
      'the * rule counted the first delete_repo and one search, not the refused call',
    );
    assert.equal(
      code(rl.intercept(exchange(p, 'bob', 'delete_repo'))),
      'pass',
      'bob has buckets of his own and no delete_repo rule',
    );
  });

  it('refuses with Retry-After in whole seconds and retryAfterMs, and a dry run takes nothing', () => {
    const p = policy('  - { principal: "*", tool: "*", requests: 2, per: minute, burst: 1 }\n');
    const rl = rateLimitInterceptor(new TokenBuckets(() => 0));
    const dry = dryRunRequest();
    assert.equal(code(rl.intercept(exchange(p, 'a', 't', dry))), 'pass');
    assert.equal(code(rl.intercept(exchange(p, 'a', 't'))), 'pass');
    assert.equal(code(rl.intercept(exchange(p, 'a', 't', dry))), 'rate_limited', 'the dry run sees the empty bucket');
    const v = rl.intercept(exchange(p, 'a', 't')) as Extract<Verdict, { kind: 'deny' }>;
    assert.equal(v.error, 'rate_limited');
    assert.deepEqual(v.data, { retryAfterMs: 30_000 });
    assert.deepEqual(v.headers, { 'retry-after': '30' });
  });

  it('applies only where the policy has rate limits', () => {
    const rl = rateLimitInterceptor();
    const none = parsePolicy('version: 1\n');
    assert.ok(none.ok);
    assert.equal(rl.applies?.(exchange(none.policy, 'a', 't')), false);
    assert.equal(
      rl.applies?.(exchange(policy('  - { principal: b, tool: t, requests: 1, per: second }\n'), 'a', 't')),
      true,
    );
  });
});
