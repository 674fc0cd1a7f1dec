import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startV1Server, type V1Server } from '../helpers/mcp-v1-server.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';

const ALICE = 'alice-list-changed-5b1d2e4f6a8b';
const BOB = 'bob-list-changed-9a8b7c6d5e4f';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

// Neither fixture tool is critical or base: both are listed only once discovery returned them.
const policy = `
version: 1
authentication:
  staticKeys: { file: keys.yaml }
grants:
  - { principal: "*", tool: echo, scopes: [tools], effect: allow }
  - { principal: "*", tool: count, scopes: [tools], effect: allow }
`;

/** A v1 SDK client session through toolgate that counts the list_changed notifications it receives. */
async function connect(url: string, key: string): Promise<{ client: Client; seen: () => number; next: () => Promise<void> }> {
  const client = new Client({ name: 'it', version: '1.0.0' });
  let count = 0;
  let waiters: (() => void)[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    count++;
    for (const w of waiters) w();
    waiters = [];
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return {
    client,
    seen: () => count,
    next: () => new Promise<void>((resolve) => waiters.push(resolve)),
  };
}

describe('deferred mode tells open GET streams when discovery changes the caller\'s tools/list', () => {
  let dir: string;
  let upstream: V1Server;
  let gate: RunningToolgate;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-list-changed-'));
    await writeFile(join(dir, 'keys.yaml'), `keys:\n  - { sha256: ${sha256(ALICE)}, principal: alice, scopes: [tools] }\n  - { sha256: ${sha256(BOB)}, principal: bob, scopes: [tools] }\n`);
    await writeFile(join(dir, 'policy.yaml'), policy);
    upstream = await startV1Server();
    gate = await startToolgate(upstream.origin, ['--policy-file', join(dir, 'policy.yaml'), '--deferred-tools', 'true']);
    await gate.ready;
  });
  after(async () => {
    await gate.close();
    await upstream.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Resolves once the upstream has the session's GET stream open (the SDK opens it after initialize). */
  async function streamOpen(client: Client): Promise<void> {
    const sid = (client.transport as StreamableHTTPClientTransport).sessionId;
    for (let i = 0; i < 200 && !upstream.seen.some((r) => r.method === 'GET' && r.headers['mcp-session-id'] === sid); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(upstream.seen.some((r) => r.method === 'GET' && r.headers['mcp-session-id'] === sid), 'the GET stream reached upstream');
  }

  it('sends notifications/tools/list_changed to the principal whose list grew, then lists the tool', { timeout: 20_000 }, async () => {
    const alice = await connect(gate.url, ALICE);
    const bob = await connect(gate.url, BOB);
    try {
      await Promise.all([streamOpen(alice.client), streamOpen(bob.client)]);
      assert.deepEqual((await alice.client.listTools()).tools.map((t) => t.name), ['search_tools']);

      const told = alice.next();
      const found = await alice.client.callTool({ name: 'search_tools', arguments: { query: 'count to n with progress', limit: 1 } });
      assert.deepEqual((found.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name), ['count']);
      await told;
      assert.equal(alice.seen(), 1);
      assert.deepEqual((await alice.client.listTools()).tools.map((t) => t.name).sort(), ['count', 'search_tools']);

      // The same tool again changes nothing; a new one does, and is the only other notification alice gets.
      await alice.client.callTool({ name: 'search_tools', arguments: { query: 'count to n with progress', limit: 1 } });
      const toldAgain = alice.next();
      await alice.client.callTool({ name: 'search_tools', arguments: { query: 'echo the given text back', limit: 1 } });
      await toldAgain;

      // Bob's own discovery is his first notification: alice's never reached his stream.
      const bobTold = bob.next();
      await bob.client.callTool({ name: 'search_tools', arguments: { query: 'echo the given text back', limit: 1 } });
      await bobTold;
      assert.equal(bob.seen(), 1);
      assert.equal(alice.seen(), 2);

      // The upstream's own notifications still arrive on the same stream, whole.
      const sid = (alice.client.transport as StreamableHTTPClientTransport).sessionId as string;
      const fromUpstream = alice.next();
      await upstream.sessions.get(sid)?.server.sendToolListChanged();
      await fromUpstream;
      assert.equal(alice.seen(), 3);
    } finally {
      await Promise.all([alice.client.close(), bob.client.close()]);
    }
  });
});
