import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { startPolicyServer, type PolicyServer } from '../helpers/mcp-policy-server.ts';
import { passed, post, refusalOf } from '../helpers/raw.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';
import { startValidator, type ValidatorProcess } from '../helpers/validator-process.ts';
import { metricValue } from '../helpers/metrics.ts';
import { waitFor } from '../helpers/wait.ts';
import { sha256 } from '../helpers/static-keys.ts';

const ALICE = 'alice-key-7c1e0b5a9d3f2e4c6a8b';
const TRACE = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const policy = (validators: string) => `
version: 1
authentication:
  staticKeys: { file: keys.yaml }
tools:
  search_docs: { sideEffect: read_only }
grants:
  - { principal: "*", tool: search_docs, scopes: [docs], effect: allow }
  - { principal: "*", tool: delete_repo, scopes: [docs], effect: allow }
validators:
${validators}
`;
const hook = '[{ event: tools/call, phase: request }]';

const call = (query: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'search_docs', arguments: { query } },
  });

describe('external validators in the chain (real validator processes)', () => {
  let dir: string;
  let upstream: PolicyServer;
  let validator: ValidatorProcess;
  let crashy: ValidatorProcess;
  const gates: Record<string, RunningToolgate> = {};
  const auth = { authorization: `Bearer ${ALICE}` };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-validators-'));
    [upstream, validator, crashy] = await Promise.all([startPolicyServer(), startValidator(), startValidator()]);
    await writeFile(
      join(dir, 'keys.yaml'),
      `keys:\n  - { sha256: ${sha256(ALICE)}, principal: alice, scopes: [docs] }\n`,
    );
    const configs: Record<string, string> = {
      active: `  - { name: pii, target: "${validator.target}", hooks: ${hook}, timeoutMs: 300 }`,
      audit: `  - { name: pii, target: "${validator.target}", hooks: ${hook}, mode: audit, timeoutMs: 300 }`,
      failOpen: `  - { name: pii, target: "${validator.target}", hooks: ${hook}, failOpen: true, timeoutMs: 300 }`,
      crash: `  - { name: pii, target: "${crashy.target}", hooks: ${hook}, timeoutMs: 300 }`,
      pair:
        `  - { name: first, target: "${validator.target}", hooks: ${hook}, priority: 10, mode: audit, timeoutMs: 1500 }\n` +
        `  - { name: second, target: "${validator.target}", hooks: ${hook}, priority: 20, timeoutMs: 1500 }`,
    };
    await Promise.all(
      Object.entries(configs).map(async ([name, v]) => {
        await writeFile(join(dir, `${name}.yaml`), policy(v));
        gates[name] = await startToolgate(upstream.origin, ['--policy-file', join(dir, `${name}.yaml`)]);
        await gates[name].ready;
      }),
    );
  });
  after(async () => {
    await Promise.all(Object.values(gates).map((g) => g.close()));
    await Promise.all([upstream.close(), validator.close(), crashy.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  /** Refused at HTTP 200: a tool result, or a JSON-RPC error where the era keeps one (argument errors before 2025-11-25). */
  const expectRefused = (r: Awaited<ReturnType<typeof post>>, code: string, secret: string) => {
    assert.equal(r.status, 200, r.text);
    assert.equal(refusalOf(r)?.code, code, r.text);
    assert.ok(!r.text.includes(secret), 'the validator message or payload leaked to the caller');
    assert.ok(!r.text.includes('secret_found'), "the validator's own code leaked to the caller");
  };

  it('pass: the call is forwarded; the validator saw event, phase, payload, principal and trace ids', async () => {
    const before = upstream.calls.length;
    const r = await post(gates.active!.url, call('plain question'), { ...auth, traceparent: TRACE });
    assert.ok(passed(r), r.text);
    assert.equal(upstream.calls.length, before + 1);
    const seen = validator.requests.at(-1)!;
    assert.equal(seen.event, 'tools/call');
    assert.equal(seen.phase, 'request');
    assert.deepEqual(JSON.parse(seen.payloadJson), { name: 'search_docs', arguments: { query: 'plain question' } });
    assert.deepEqual(seen.principal, { id: 'alice', scopes: ['docs'], credentialStrength: 'static' });
    assert.equal(seen.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.equal(seen.spanId, '00f067aa0ba902b7');
    assert.equal(seen.dryRun, false);
    assert.equal(seen.validator, 'pii');
  });

  it('block: valid false with severity error refuses with 403 validator_denied, nothing forwarded, nothing leaked', async () => {
    const before = upstream.calls.length;
    const r = await post(gates.active!.url, call('BLOCK canary-41c7'), auth);
    expectRefused(r, 'validator_denied', 'canary-41c7');
    assert.equal(upstream.calls.length, before);
  });

  it('an integer JSON.parse rounded is refused before a validator judges the rounded number', async () => {
    // delete_repo's schema compares no values, so only the validator would read the number.
    const digits = '900719925474099312';
    const [calls, asked] = [upstream.calls.length, validator.requests.length];
    const body = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"delete_repo","arguments":{"repo":"a/b","account":${digits}}}}`;
    const r = await post(gates.active!.url, body, auth);
    expectRefused(r, 'inexact_number', digits);
    assert.deepEqual(r.json().error?.data?.errors, [{ instancePath: '/account', keyword: 'precision' }]);
    assert.equal(validator.requests.length, asked, 'the validator was not asked');
    assert.equal(upstream.calls.length, calls);
    const exact = await post(gates.active!.url, body.replace(digits, '9007199254740992'), auth);
    assert.ok(passed(exact), exact.text);
  });

  it('warn: valid false with severity warning passes', async () => {
    const r = await post(gates.active!.url, call('WARN odd'), auth);
    assert.ok(passed(r), r.text);
  });

  it('timeout without failOpen refuses with 503 validator_unavailable; a malformed answer too', async () => {
    expectRefused(
      await post(gates.active!.url, call('SLOW canary-9e2a'), auth),
      'validator_unavailable',
      'canary-9e2a',
    );
    expectRefused(
      await post(gates.active!.url, call('MALFORMED canary-3b1f'), auth),
      'validator_unavailable',
      'canary-3b1f',
    );
  });

  it('timeout with failOpen passes; a block with failOpen still refuses', async () => {
    assert.ok(passed(await post(gates.failOpen!.url, call('SLOW quick'), auth)));
    expectRefused(await post(gates.failOpen!.url, call('BLOCK canary-77aa'), auth), 'validator_denied', 'canary-77aa');
  });

  it('a caller that leaves while the validator decides: nothing is forwarded, the request ends as client_closed', async () => {
    const gate = gates.failOpen!;
    const forwarded = upstream.calls.length;
    const asked = validator.requests.length;
    const closedCount = () =>
      metricValue(gate.adminUrl, 'toolgate_requests_total', { method: 'tools/call', outcome: 'client_closed' });
    const closedBefore = await closedCount();
    const leaving = new AbortController();
    const pending = request(gate.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth },
      body: call('SLOW left-early'),
      signal: leaving.signal,
    }).catch(() => 'aborted');
    await waitFor(() => validator.requests.length > asked, 'the validator to receive the call');
    leaving.abort();
    assert.equal(await pending, 'aborted');
    // failOpen forwards once the 300 ms timeout passes; by then the caller is gone.
    await waitFor(async () => (await closedCount()) > closedBefore, 'the request to end as client_closed');
    assert.equal(upstream.calls.length, forwarded, 'a call was sent upstream for a caller that had left');
    assert.equal(await metricValue(gate.adminUrl, 'toolgate_inflight_requests'), 0);
  });

  it('audit mode never blocks: neither a block nor a timeout', async () => {
    assert.ok(passed(await post(gates.audit!.url, call('BLOCK audited'), auth)));
    assert.ok(passed(await post(gates.audit!.url, call('SLOW audited'), auth)));
  });

  it('validators run in parallel: two that each take the timeout cost one timeout, and an audit one never decides', async () => {
    const began = performance.now();
    expectRefused(await post(gates.pair!.url, call('SLOW parallel'), auth), 'validator_unavailable', 'parallel');
    const elapsed = performance.now() - began;
    // In series the two 1.5 s timeouts would take at least 3 s; the wide gap
    // keeps this a statement about concurrency, not about machine speed.
    assert.ok(elapsed < 2900, `two 1.5 s timeouts took ${elapsed.toFixed(0)} ms: not in parallel`);
    expectRefused(await post(gates.pair!.url, call('BLOCK both-canary'), auth), 'validator_denied', 'both-canary');
  });

  it('a validator that crashes refuses the call (not failOpen), and keeps refusing while it is gone', async () => {
    expectRefused(await post(gates.crash!.url, call('CRASH now'), auth), 'validator_unavailable', 'CRASH');
    await crashy.exited();
    expectRefused(await post(gates.crash!.url, call('plain'), auth), 'validator_unavailable', 'plain');
  });
});
