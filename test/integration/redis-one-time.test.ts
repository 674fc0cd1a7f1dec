/**
 * One-time tokens over HTTP with the replay store in Redis: a token that
 * verifies but cannot be checked for reuse gets a retryable 503, never a 401
 * and never a second acceptance (issue 16: D4, D8). Grants come from the
 * policy file here, so the revision-age gauge must read 0 (D6).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startFaultUpstream, type FaultUpstream } from '../helpers/fault-upstream.ts';
import { passed, post } from '../helpers/raw.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';
import { AUDIENCE, ISSUER, keyPair, sign, type KeyPair } from '../unit/auth/fixtures.ts';

const call = JSON.stringify({
  jsonrpc: '2.0',
  id: 'c1',
  method: 'tools/call',
  params: { name: 'echo', arguments: { text: 'x' } },
});

describe('one-time tokens with the replay store in Redis', () => {
  let dir: string;
  let key: KeyPair;
  let redis: RedisServer;
  let upstream: FaultUpstream;
  let gate: RunningToolgate;
  const token = () => sign({ key, subject: 'agent', claims: { one_time: true, jti: randomUUID() } });
  const use = (t: string) => post(gate.url, call, { authorization: `Bearer ${t}` });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-one-time-'));
    key = await keyPair('k1');
    await writeFile(join(dir, 'jwks.json'), JSON.stringify({ keys: [key.publicJwk] }));
    await writeFile(
      join(dir, 'policy.yaml'),
      [
        'version: 1',
        'authentication:',
        '  jwt:',
        `    issuer: ${ISSUER}`,
        `    audience: ${AUDIENCE}`,
        '    jwksFile: jwks.json',
        '    algorithms: [ES256]',
        '    oneTime: { claim: one_time }',
        'grants:',
        '  - { principal: agent, tool: echo, effect: allow }',
        '',
      ].join('\n'),
    );
    [redis, upstream] = await Promise.all([startRedis(), startFaultUpstream()]);
    gate = await startToolgate(upstream.origin, [
      '--policy-file',
      join(dir, 'policy.yaml'),
      '--redis-url',
      redis.url,
      '--redis-command-timeout-ms',
      '300',
    ]);
    await gate.ready;
  });
  after(async () => {
    await gate?.close();
    await upstream?.close();
    await redis?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a token is accepted once; its replay is a bad credential', async () => {
    const t = await token();
    assert.ok(passed(await use(t)));
    assert.equal((await use(t)).status, 401);
  });

  it('a token used before Redis lost its data is not accepted again after it', async () => {
    const t = await token();
    assert.ok(passed(await use(t)));
    await redis.restart();
    // Retried as the 503 invites: still never a second acceptance.
    for (let attempt = 0; attempt < 5; attempt++) {
      const res = await use(t);
      assert.equal(res.status, 503, `attempt ${attempt}`);
      assert.equal(res.json().error?.data?.code, 'credential_check_unavailable');
      await new Promise((r) => setTimeout(r, 50));
    }
    let accepted = false;
    for (let i = 0; i < 40 && !accepted; i++) {
      accepted = passed(await use(await token()));
      if (!accepted) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(accepted, 'tokens issued after the loss work again');
  });

  it('while Redis is unreachable, a valid token gets a retryable 503 that echoes nothing', async () => {
    await redis.kill();
    const t = await token();
    const res = await use(t);
    assert.equal(res.status, 503);
    assert.equal(res.headers['retry-after'], '1');
    const body = res.json();
    assert.equal(body.error?.code, -31503);
    assert.deepEqual(body.error?.data, {
      code: 'credential_check_unavailable',
      retryable: true,
      hint: 'retry_later',
      retryAfterMs: 1000,
    });
    assert.ok(!res.text.includes(t.slice(-20)) && !res.text.includes('agent'), 'no token or principal in the answer');
  });

  it('grants from the policy file are always current: the revision age reads 0', async () => {
    await new Promise((r) => setTimeout(r, 1100));
    const text = await (await fetch(`${gate.adminUrl}/metrics`)).text();
    assert.match(text, /^toolgate_grant_revision_age_seconds 0$/m);
  });
});
