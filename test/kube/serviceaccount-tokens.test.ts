/**
 * The `kubernetes` verifier against tokens a real API server issues
 * (TokenRequest, as `kubectl create token` asks for them): the right
 * audience gets the ServiceAccount's principal, every other token a 401 that
 * says why, a deleted Pod's token stops working within the TokenReview
 * cache bound, and a namespace-wide grant covers that namespace only.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { startApprovalUpstream } from '../helpers/approval-upstream.ts';
import { ApproverClient } from '../helpers/approver-client.ts';
import { startGateWith, startPolicyGate, type PolicyGate } from '../helpers/policy-gate.ts';
import { freePort } from '../helpers/ports.ts';
import { passed, post, refusalOf, refusedCall, type RawResponse } from '../helpers/raw.ts';
import { waitFor } from '../helpers/wait.ts';
import { helm, kubeSkip, kubectl, ok } from './cli.ts';
import { startControlPlane, type ControlPlane } from './control-plane.ts';
import { CHART } from './injector.ts';

const AUDIENCE = 'toolgate.test/tickets';
const CACHE_SECONDS = 2;
/** kube-apiserver keeps successful token authentications for 10 s (its token cache), TokenReviews included. */
const API_SERVER_TOKEN_CACHE_SECONDS = 10;
const search = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'search_docs', arguments: { query: 'q' } },
});
const rotate = JSON.stringify({
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/call',
  params: { name: 'rotate_keys', arguments: {} },
});

function policy(cp: ControlPlane, apiServer: string, tokenFile: string, jwksFile?: string): string {
  return [
    'version: 1',
    'authentication:',
    '  kubernetes:',
    `    issuer: ${cp.issuer}`,
    `    audience: ${AUDIENCE}`,
    ...(jwksFile === undefined ? [] : [`    jwksFile: ${jwksFile}`]),
    `    apiServer: { url: "${apiServer}", caFile: "${cp.caFile}", tokenFile: "${tokenFile}", timeoutMs: 1000 }`,
    `    tokenReview: { enabled: true, cacheSeconds: ${CACHE_SECONDS} }`,
    'rateLimits:',
    '  - { principal: "system:serviceaccount:agents:writer", tool: search_docs, requests: 2, per: hour }',
    'grants:',
    '  - { principal: "*", scopes: ["system:serviceaccounts:agents"], tool: search_docs, effect: allow, name: agents-search }',
    '  - { principal: "system:serviceaccount:agents:blocked", tool: search_docs, effect: deny, name: blocked }',
    '  - principal: "system:serviceaccount:agents:writer"',
    '    tool: rotate_keys',
    '    effect: allow',
    '    when: principal.claims["kubernetes.io"].namespace == "agents" && principal.claims["kubernetes.io"].pod.name == "writer-pod"',
    '',
  ].join('\n');
}

describe('ServiceAccount tokens from a real API server', { skip: kubeSkip(), timeout: 600_000 }, () => {
  let cp: ControlPlane;
  let setup: PolicyGate;
  const token = (ns: string, sa: string, ...extra: string[]) =>
    ok(kubectl(cp, ['-n', ns, 'create', 'token', sa, ...extra]), `token for ${ns}/${sa}`).trim();
  const bound = (ns: string, sa: string, pod: string) =>
    token(ns, sa, '--audience', AUDIENCE, '--bound-object-kind', 'Pod', '--bound-object-name', pod);
  const as = (url: string, bearer: string, body = search) => post(url, body, { authorization: `Bearer ${bearer}` });
  const pod = (ns: string, name: string, sa: string) =>
    ok(
      kubectl(
        cp,
        ['create', '-f', '-'],
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace: ns },
          spec: { serviceAccountName: sa, containers: [{ name: 'agent', image: 'registry.example.com/agent:1' }] },
        }),
      ),
      `pod ${name}`,
    );
  const table: string[] = ['| case | status | code | error.data.reason | WWW-Authenticate |', '|---|---|---|---|---|'];
  const unauthenticated = (r: RawResponse, reason: string, secret: string, what = reason) => {
    table.push(
      `| ${what} | ${r.status} | ${refusalOf(r)?.code} | ${String(refusalOf(r)?.data.reason)} | \`${String(r.headers['www-authenticate'])}\` |`,
    );
    assert.equal(r.status, 401, r.text);
    const refused = refusalOf(r);
    assert.equal(refused?.code, 'unauthenticated');
    assert.equal(refused?.data.reason, reason);
    assert.match(r.headers['www-authenticate'] as string, /^Bearer error="invalid_token", error_description="[^"]+"/);
    for (const part of secret.split('.'))
      assert.ok(
        !r.text.includes(part) && !String(r.headers['www-authenticate']).includes(part),
        'nothing of the token is echoed',
      );
    assert.ok(!r.text.includes('system:serviceaccount'), 'nor its subject');
  };

  before(async () => {
    cp = await startControlPlane();
    for (const ns of ['agents', 'other', 'toolgate']) ok(kubectl(cp, ['create', 'namespace', ns]), `namespace ${ns}`);
    for (const [ns, sa] of [
      ['agents', 'reader'],
      ['agents', 'writer'],
      ['agents', 'blocked'],
      ['other', 'intruder'],
      ['toolgate', 'toolgate'],
    ]) {
      ok(kubectl(cp, ['-n', ns as string, 'create', 'serviceaccount', sa as string]), `serviceaccount ${sa}`);
    }
    // The sidecar's ServiceAccount gets its TokenReview permission from the chart, as in production.
    ok(
      helm(cp, [
        'install',
        'toolgate',
        CHART,
        '--namespace',
        'toolgate-system',
        '--create-namespace',
        '--set',
        'kubernetesAuth.tokenReview.serviceAccounts[0].namespace=toolgate',
        '--set',
        'kubernetesAuth.tokenReview.serviceAccounts[0].name=toolgate',
      ]),
      'helm install',
    );
    for (const [ns, name, sa] of [
      ['agents', 'reader-pod', 'reader'],
      ['agents', 'writer-pod', 'writer'],
      ['agents', 'blocked-pod', 'blocked'],
      ['other', 'intruder-pod', 'intruder'],
    ]) {
      pod(ns as string, name as string, sa as string);
    }
    const sidecarToken = join(cp.dir, 'sidecar-token');
    writeFileSync(sidecarToken, token('toolgate', 'toolgate', '--duration', '2h'));
    setup = await startPolicyGate({ 'policy.yaml': policy(cp, cp.server, sidecarToken) }, [
      '--principal-header',
      'X-Toolgate-Principal',
    ]);
  });
  after(async () => {
    mkdirSync(join(import.meta.dirname, '../../test-output'), { recursive: true });
    writeFileSync(join(import.meta.dirname, '../../test-output/serviceaccount-refusals.md'), `${table.join('\n')}\n`);
    await setup?.close();
    await cp?.stop();
  });

  it('accepts a Pod-bound token for its audience as system:serviceaccount:<namespace>:<name>', async () => {
    const r = await as(setup.gate.url, bound('agents', 'reader', 'reader-pod'));
    assert.ok(passed(r), r.text);
    assert.equal(setup.upstream.calls.at(-1)?.headers['x-toolgate-principal'], 'system:serviceaccount:agents:reader');
    const list = await post(setup.gate.url, '{"jsonrpc":"2.0","id":3,"method":"tools/list"}', {
      authorization: `Bearer ${bound('agents', 'reader', 'reader-pod')}`,
    });
    assert.deepEqual(
      (list.json() as { result: { tools: { name: string }[] } }).result.tools.map((t: { name: string }) => t.name),
      ['search_docs'],
      'tools/list shows what the namespace grant allows',
    );
  });

  it('refuses a token with the API server’s default audience, or another audience', async () => {
    const apiServerToken = token('agents', 'reader');
    unauthenticated(
      await as(setup.gate.url, apiServerToken),
      'wrong_audience',
      apiServerToken,
      'the API server’s default audience',
    );
    const other = token('agents', 'reader', '--audience', 'someone-else');
    unauthenticated(await as(setup.gate.url, other), 'wrong_audience', other, 'another audience');
    const both = token('agents', 'reader', '--audience', AUDIENCE, '--audience', cp.issuer);
    unauthenticated(await as(setup.gate.url, both), 'wrong_audience', both, 'its audience and the API server’s');
  });

  it('refuses a token from another cluster that uses the same issuer name', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forged = await new SignJWT({
      'kubernetes.io': { namespace: 'agents', serviceaccount: { name: 'reader', uid: 'x' } },
    })
      .setProtectedHeader({ alg: 'RS256', kid: 'other-cluster' })
      .setIssuer(cp.issuer)
      .setAudience(AUDIENCE)
      .setSubject('system:serviceaccount:agents:reader')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);
    unauthenticated(await as(setup.gate.url, forged), 'untrusted_signer', forged, 'another cluster, same issuer name');
  });

  it('stops accepting a token within the TokenReview cache bound once its Pod is deleted', async () => {
    pod('agents', 'short-lived', 'reader');
    const t = bound('agents', 'reader', 'short-lived');
    assert.ok(passed(await as(setup.gate.url, t)));
    ok(kubectl(cp, ['-n', 'agents', 'delete', 'pod', 'short-lived', '--wait']), 'delete pod');
    let last: RawResponse | undefined;
    // The documented bound: tokenReview.cacheSeconds here, plus the 10 s the API server caches its own
    // token authentications (measured: a TokenReview of a deleted Pod's token still succeeds for 10 s).
    await waitFor(
      async () => (last = await as(setup.gate.url, t)).status === 401,
      'the deleted Pod’s token refused',
      (CACHE_SECONDS + API_SERVER_TOKEN_CACHE_SECONDS) * 1000 + 3000,
    );
    unauthenticated(last as RawResponse, 'revoked', t, 'its Pod deleted (TokenReview on)');
  });

  it('lets a namespace-wide grant in every ServiceAccount of that namespace and no other, exact rows first', async () => {
    assert.ok(
      passed(await as(setup.gate.url, bound('agents', 'writer', 'writer-pod'))),
      'another ServiceAccount of agents',
    );
    const intruder = await as(setup.gate.url, bound('other', 'intruder', 'intruder-pod'));
    assert.equal(refusalOf(intruder)?.code, 'tool_not_granted', 'a ServiceAccount of another namespace');
    const blocked = await as(setup.gate.url, bound('agents', 'blocked', 'blocked-pod'));
    assert.equal(refusalOf(blocked)?.code, 'tool_not_granted', 'an exact deny row beats the namespace grant');
  });

  it('keeps rate limits per ServiceAccount, as for any principal', async () => {
    const writer = bound('agents', 'writer', 'writer-pod');
    assert.ok(passed(await as(setup.gate.url, writer)), 'the second call of two an hour');
    const limited = await as(setup.gate.url, writer);
    assert.equal(refusalOf(limited)?.code, 'rate_limited');
    assert.ok(
      passed(await as(setup.gate.url, bound('agents', 'reader', 'reader-pod'))),
      'another ServiceAccount has its own quota',
    );
  });

  it('gives conditions the token’s namespace, ServiceAccount and Pod', async () => {
    assert.ok(passed(await as(setup.gate.url, bound('agents', 'writer', 'writer-pod'), rotate)));
    pod('agents', 'writer-other-pod', 'writer');
    const elsewhere = await as(setup.gate.url, bound('agents', 'writer', 'writer-other-pod'), rotate);
    assert.equal(refusalOf(elsewhere)?.code, 'tool_not_granted');
    assert.equal(refusalOf(elsewhere)?.data.reason, 'condition');
  });

  it('lets a ServiceAccount approve another’s call, by its namespace as the approver scope', async () => {
    for (const [ns, sa] of [['approvers', 'bot']]) {
      ok(kubectl(cp, ['create', 'namespace', ns as string]), 'namespace');
      ok(kubectl(cp, ['-n', ns as string, 'create', 'serviceaccount', sa as string]), 'serviceaccount');
    }
    const approvals = policy(cp, cp.server, join(cp.dir, 'sidecar-token')).replace(
      /grants:[\s\S]*$/,
      [
        'tools:',
        '  refund_payment: { sideEffect: non_idempotent_write }',
        'grants:',
        '  - { principal: "*", scopes: ["system:serviceaccounts:agents"], tool: refund_payment, effect: require_approval, name: refunds,',
        '      approval: { approverScope: "system:serviceaccounts:approvers" } }',
        '',
      ].join('\n'),
    );
    const gate = await startGateWith(startApprovalUpstream, { 'policy.yaml': approvals }, ['--approval-port', '0']);
    try {
      const refund = JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'refund_payment', arguments: { amount: 500, currency: 'EUR' } },
      });
      const asked = await as(gate.gate.url, bound('agents', 'reader', 'reader-pod'), refund);
      const url = refusedCall(asked, 'approval_required').url as string;
      const colleague = new ApproverClient();
      await colleague.signIn(url, bound('agents', 'writer', 'writer-pod'));
      assert.equal((await colleague.decide(url, 'approve')).status, 403, 'a ServiceAccount of agents is no approver');
      const approver = new ApproverClient();
      const page = await approver.signIn(url, token('approvers', 'bot', '--audience', AUDIENCE));
      assert.equal(page.status, 200, page.text);
      assert.equal((await approver.decide(url, 'approve')).status, 303);
      // A fresh token of the same ServiceAccount: the approval is bound to the principal, not to a token.
      assert.ok(passed(await as(gate.gate.url, bound('agents', 'reader', 'reader-pod'), refund)));
      assert.equal(gate.upstream.executions.get('refund_payment'), 1);
    } finally {
      await gate.close();
    }
  });

  it('fails closed with a retryable 503 when the API server cannot review the token', async () => {
    const jwks = join(cp.dir, 'jwks.json');
    writeFileSync(jwks, JSON.stringify((await cp.api('GET', '/openid/v1/jwks')).body));
    const gone = `https://127.0.0.1:${await freePort()}`;
    const offline = await startPolicyGate({ 'policy.yaml': policy(cp, gone, join(cp.dir, 'sidecar-token'), jwks) });
    try {
      const r = await as(offline.gate.url, bound('agents', 'reader', 'reader-pod'));
      assert.equal(r.status, 503, r.text);
      assert.equal(refusalOf(r)?.code, 'credential_check_unavailable');
      assert.ok(Number(r.headers['retry-after']) >= 1);
      assert.equal(offline.upstream.calls.length, 0, 'nothing reached the server');
    } finally {
      await offline.close();
    }
  });
});
