import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { AUDIENCE, ISSUER, keyPair, sign } from '../unit/auth/fixtures.ts';
import { listenOnLoopback, type Listening } from '../helpers/http-server.ts';
import { startPolicyServer, type PolicyServer } from '../helpers/mcp-policy-server.ts';
import { metricValue } from '../helpers/metrics.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * A caller that gives up while toolgate is still checking its token (here the
 * first request, which fetches the JWKS): the request must still end, as
 * aborted, and nothing may reach the upstream.
 */
describe('a caller that leaves while its token is checked', () => {
  let dir: string;
  let upstream: PolicyServer;
  let idp: Listening;
  let gate: RunningToolgate;
  let token: string;
  let jwks = '';
  const held: (() => void)[] = [];
  let fetches = 0;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-left-'));
    const key = await keyPair('k1');
    jwks = JSON.stringify({ keys: [key.publicJwk] });
    token = await sign({ key, subject: 'bob', claims: { scope: 'docs:read' } });
    // The identity provider holds each JWKS answer until the test lets it go.
    idp = await listenOnLoopback((_req, res) => {
      fetches++;
      held.push(() => res.writeHead(200, { 'content-type': 'application/json' }).end(jwks));
    });
    await writeFile(
      join(dir, 'policy.yaml'),
      `
version: 1
authentication:
  jwt: { issuer: "${ISSUER}", audience: "${AUDIENCE}", jwksUrl: "${idp.origin}/jwks.json" }
grants:
  - { principal: "*", tool: search_docs, scopes: ["docs:read"], effect: allow }
`,
    );
    upstream = await startPolicyServer();
    gate = await startToolgate(upstream.origin, ['--policy-file', join(dir, 'policy.yaml')]);
    await gate.ready;
  });
  after(async () => {
    for (const release of held) release();
    await gate.close();
    await Promise.all([upstream.close(), idp.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  it('ends the request as aborted once the check completes, forwards nothing, and leaves nothing in flight', async () => {
    const aborted = () =>
      metricValue(gate.adminUrl, 'toolgate_requests_total', { method: 'unclassified', outcome: 'aborted' });
    const abortedBefore = await aborted();
    const leaving = new AbortController();
    const pending = request(gate.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'search_docs', arguments: { query: 'q' } },
      }),
      signal: leaving.signal,
    }).catch(() => 'aborted');
    await waitFor(() => fetches > 0, 'toolgate to fetch the JWKS');
    leaving.abort();
    assert.equal(await pending, 'aborted');
    for (const release of held.splice(0)) release();
    await waitFor(async () => (await aborted()) > abortedBefore, 'the request to end as aborted');
    assert.equal(upstream.calls.length, 0);
    assert.equal(await metricValue(gate.adminUrl, 'toolgate_inflight_requests'), 0);
  });
});
