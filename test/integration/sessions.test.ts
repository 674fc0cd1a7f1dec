import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { request } from 'undici';
import { startV1Server, type V1Server } from '../helpers/mcp-v1-server.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';
import { sha256 } from '../helpers/static-keys.ts';

const ALICE = 'alice-sessions-3c9e1f7a5b';
const BOB = 'bob-sessions-8d2a6e4c0f';

/**
 * A 2025 session id is not a credential: a sessionful SDK server keeps
 * per-session state (its resumable streams replay tool results), so through
 * toolgate only the principal whose initialize opened a session may use it.
 */
describe('MCP sessions are bound to the principal that opened them', () => {
  let dir: string;
  let upstream: V1Server;
  let gate: RunningToolgate;
  let alice: Client;
  let aliceTransport: StreamableHTTPClientTransport;
  let session: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-sessions-'));
    await writeFile(
      join(dir, 'keys.yaml'),
      `keys:\n  - { sha256: ${sha256(ALICE)}, principal: alice, scopes: [tools] }\n  - { sha256: ${sha256(BOB)}, principal: bob, scopes: [tools] }\n`,
    );
    await writeFile(
      join(dir, 'policy.yaml'),
      'version: 1\nauthentication:\n  staticKeys: { file: keys.yaml }\ngrants:\n  - { principal: "*", tool: echo, scopes: [tools], effect: allow }\n',
    );
    upstream = await startV1Server();
    gate = await startToolgate(upstream.origin, ['--policy-file', join(dir, 'policy.yaml')]);
    await gate.ready;
    alice = new Client({ name: 'alice', version: '1' });
    aliceTransport = new StreamableHTTPClientTransport(new URL(gate.url), {
      requestInit: { headers: { authorization: `Bearer ${ALICE}` } },
    });
    await alice.connect(aliceTransport);
    session = aliceTransport.sessionId as string;
  });
  after(async () => {
    await alice.close();
    await gate.close();
    await upstream.close();
    await rm(dir, { recursive: true, force: true });
  });

  const as = (key: string, method: 'POST' | 'GET' | 'DELETE', sessionId: string) =>
    request(gate.url, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-11-25',
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      ...(method === 'POST' && {
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 5,
          method: 'tools/call',
          params: { name: 'echo', arguments: { text: 'hi' } },
        }),
      }),
    });

  const expectRefused = async (res: Awaited<ReturnType<typeof as>>, id: unknown, sessionId: string) => {
    const text = await res.body.text();
    assert.equal(res.statusCode, 404, text);
    const body = JSON.parse(text) as { id: unknown; error: { code: number; data: { code: string } } };
    assert.equal(body.error.data.code, 'session_not_found');
    assert.equal(body.error.code, -31404);
    assert.equal(body.id, id);
    assert.ok(!text.includes(sessionId), 'the error echoes the session id');
  };

  it('serves the owner as usual', async () => {
    const r = await alice.callTool({ name: 'echo', arguments: { text: 'mine' } });
    assert.deepEqual(r.content, [{ type: 'text', text: 'mine' }]);
  });

  it("refuses another principal's POST, GET and DELETE with that session id, and none reaches the server", async () => {
    const seen = upstream.seen.length;
    await expectRefused(await as(BOB, 'POST', session), 5, session);
    await expectRefused(await as(BOB, 'GET', session), null, session);
    await expectRefused(await as(BOB, 'DELETE', session), null, session);
    assert.equal(upstream.seen.length, seen);
    const r = await alice.callTool({ name: 'echo', arguments: { text: 'still mine' } });
    assert.deepEqual(r.content, [{ type: 'text', text: 'still mine' }], 'the owner keeps the session');
  });

  it('refuses a session id toolgate never saw opened', async () => {
    const invented = '3f0c9a52-0000-4000-8000-000000000000';
    await expectRefused(await as(ALICE, 'POST', invented), 5, invented);
  });

  it('lets a new client of another principal open its own session', async () => {
    const bob = new Client({ name: 'bob', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(gate.url), {
      requestInit: { headers: { authorization: `Bearer ${BOB}` } },
    });
    await bob.connect(transport);
    try {
      assert.notEqual(transport.sessionId, session);
      const r = await bob.callTool({ name: 'echo', arguments: { text: 'bob' } });
      assert.deepEqual(r.content, [{ type: 'text', text: 'bob' }]);
    } finally {
      await bob.close();
    }
  });

  it('forgets a session its owner ended with DELETE', async () => {
    const owner = new StreamableHTTPClientTransport(new URL(gate.url), {
      requestInit: { headers: { authorization: `Bearer ${ALICE}` } },
    });
    const client = new Client({ name: 'alice-2', version: '1' });
    await client.connect(owner);
    const ended = owner.sessionId as string;
    await owner.terminateSession();
    await client.close();
    await expectRefused(await as(ALICE, 'POST', ended), 5, ended);
  });
});
