import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startCatalogueServer, tool, type CatalogueServer } from '../helpers/catalogue-servers.ts';
import { startV1Server, type V1Server } from '../helpers/mcp-v1-server.ts';
import { listen, MODERN_META, modernHeaders } from '../helpers/listen-stream.ts';
import { post } from '../helpers/raw.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { startToolgate } from '../helpers/toolgate.ts';
import { sha256 } from '../helpers/static-keys.ts';

const ALICE = 'alice-list-changed-5b1d2e4f6a8b';
const BOB = 'bob-list-changed-9a8b7c6d5e4f';

/** Resolves once the upstream has the session's GET stream open (the SDK opens it after initialize). */
async function streamOpen(upstream: V1Server, client: Client): Promise<void> {
  const sid = (client.transport as StreamableHTTPClientTransport).sessionId;
  const open = () => upstream.seen.some((r) => r.method === 'GET' && r.headers['mcp-session-id'] === sid);
  for (let i = 0; i < 200 && !open(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(open(), 'the GET stream reached upstream');
}

interface PolicyGate {
  readonly url: string;
  /** Puts a new policy in force (written beside and renamed over, as a ConfigMap update does). */
  grant(tools: readonly string[], extra?: string): Promise<void>;
  close(): Promise<void>;
}

const policyText = (tools: readonly string[], extra = '') =>
  `version: 1\nauthentication:\n  staticKeys: { file: keys.yaml }\ngrants:\n${tools.map((t) => `  - { principal: "*", tool: ${t}, scopes: [tools], effect: allow }`).join('\n')}\n${extra}`;

/**
 * toolgate with a policy in front of `origin`, with alice and bob's keys and
 * every named tool granted by scope. No tool is critical or base: in
 * deferred mode each is listed only once discovery returned it.
 */
async function startPolicyGate(
  origin: string,
  tools: readonly string[],
  deferred: boolean,
  flags: readonly string[] = [],
): Promise<PolicyGate> {
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-list-changed-'));
  await writeFile(
    join(dir, 'keys.yaml'),
    `keys:\n  - { sha256: ${sha256(ALICE)}, principal: alice, scopes: [tools] }\n  - { sha256: ${sha256(BOB)}, principal: bob, scopes: [tools] }\n`,
  );
  await writeFile(join(dir, 'policy.yaml'), policyText(tools));
  const gate = await startToolgate(origin, [
    '--policy-file',
    join(dir, 'policy.yaml'),
    ...(deferred ? ['--deferred-tools', 'true'] : []),
    ...flags,
  ]);
  await gate.ready;
  return {
    url: gate.url,
    async grant(next, extra) {
      await writeFile(join(dir, 'policy.next'), policyText(next, extra));
      await rename(join(dir, 'policy.next'), join(dir, 'policy.yaml'));
    },
    async close() {
      await gate.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A v1 SDK client session through toolgate that counts the list_changed notifications it receives. */
async function connect(
  url: string,
  key: string,
): Promise<{ client: Client; seen: () => number; next: () => Promise<void> }> {
  const client = new Client({ name: 'it', version: '1.0.0' });
  let count = 0;
  let waiters: (() => void)[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    count++;
    for (const w of waiters) w();
    waiters = [];
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  return {
    client,
    seen: () => count,
    next: () => new Promise<void>((resolve) => waiters.push(resolve)),
  };
}

describe("deferred mode tells open GET streams when discovery changes the caller's tools/list", () => {
  let upstream: V1Server;
  let gate: PolicyGate;

  before(async () => {
    upstream = await startV1Server();
    gate = await startPolicyGate(upstream.origin, ['echo', 'count'], true);
  });
  after(async () => {
    await gate.close();
    await upstream.close();
  });

  it(
    'sends notifications/tools/list_changed to the principal whose list grew, then lists the tool',
    { timeout: 20_000 },
    async () => {
      const alice = await connect(gate.url, ALICE);
      const bob = await connect(gate.url, BOB);
      try {
        await Promise.all([streamOpen(upstream, alice.client), streamOpen(upstream, bob.client)]);
        assert.deepEqual(
          (await alice.client.listTools()).tools.map((t) => t.name),
          ['search_tools'],
        );

        const told = alice.next();
        const found = await alice.client.callTool({
          name: 'search_tools',
          arguments: { query: 'count to n with progress', limit: 1 },
        });
        assert.deepEqual(
          (found.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name),
          ['count'],
        );
        await told;
        assert.equal(alice.seen(), 1);
        assert.deepEqual((await alice.client.listTools()).tools.map((t) => t.name).sort(), ['count', 'search_tools']);

        // The same tool again changes nothing; a new one does, and is the only other notification alice gets.
        await alice.client.callTool({
          name: 'search_tools',
          arguments: { query: 'count to n with progress', limit: 1 },
        });
        const toldAgain = alice.next();
        await alice.client.callTool({
          name: 'search_tools',
          arguments: { query: 'echo the given text back', limit: 1 },
        });
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
    },
  );
});

describe('deferred mode tells 2026-07-28 listen streams that opted in to tool list changes', () => {
  let upstream: CatalogueServer;
  let gate: PolicyGate;

  before(async () => {
    upstream = await startCatalogueServer({
      era: '2026',
      tools: [tool('alpha'), tool('rotate_keys', { description: 'Rotate the signing keys of a repository' })],
    });
    gate = await startPolicyGate(upstream.url.replace(/\/mcp$/, ''), ['alpha', 'rotate_keys'], true);
  });
  after(async () => {
    await gate.close();
    await upstream.close();
  });

  it(
    "stamps toolgate's notification with the subscription, between the upstream's own events",
    { timeout: 20_000 },
    async () => {
      const stream = await listen(gate.url, ALICE, 'listen-1');
      try {
        const ack = await stream.next('notifications/subscriptions/acknowledged');
        assert.equal(ack.params?._meta?.['io.modelcontextprotocol/subscriptionId'], 'listen-1');

        const search = JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'search_tools', arguments: { query: 'rotate signing keys', limit: 1 }, _meta: MODERN_META },
        });
        const found = await post(gate.url, search, modernHeaders('tools/call', ALICE, 'search_tools'));
        assert.equal(found.status, 200, found.text);
        assert.deepEqual(
          (found.json().result as { structuredContent: { tools: { name: string }[] } }).structuredContent.tools.map(
            (t) => t.name,
          ),
          ['rotate_keys'],
        );
        const ours = await stream.next('notifications/tools/list_changed');
        assert.deepEqual(ours.params, { _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' } });

        await upstream.notifyChanged();
        const theirs = await stream.next('notifications/tools/list_changed');
        assert.equal(theirs.params?._meta?.['io.modelcontextprotocol/subscriptionId'], 'listen-1');
      } finally {
        stream.close();
      }
    },
  );
});

describe('a grant change tells every open stream to list again', () => {
  let upstream: V1Server;
  let gate: PolicyGate;

  before(async () => {
    upstream = await startV1Server();
    gate = await startPolicyGate(upstream.origin, ['echo', 'count'], false);
  });
  after(async () => {
    await gate.close();
    await upstream.close();
  });

  it(
    'sends notifications/tools/list_changed when a reload revokes a tool, and the list no longer has it',
    { timeout: 20_000 },
    async () => {
      const alice = await connect(gate.url, ALICE);
      const bob = await connect(gate.url, BOB);
      try {
        await Promise.all([streamOpen(upstream, alice.client), streamOpen(upstream, bob.client)]);
        assert.deepEqual((await alice.client.listTools()).tools.map((t) => t.name).sort(), ['count', 'echo']);
        const told = Promise.all([alice.next(), bob.next()]);
        await gate.grant(['echo', 'count'], '  - { principal: alice, tool: count, effect: deny }\n');
        await told;
        assert.deepEqual(
          (await alice.client.listTools()).tools.map((t) => t.name),
          ['echo'],
        );
        assert.deepEqual((await bob.client.listTools()).tools.map((t) => t.name).sort(), ['count', 'echo']);
      } finally {
        await Promise.all([alice.client.close(), bob.client.close()]);
      }
    },
  );
});

describe('with activations in Redis, a discovery through one replica tells a stream held by another', () => {
  let redis: RedisServer;
  let upstream: CatalogueServer;
  let a: PolicyGate;
  let b: PolicyGate;

  before(async () => {
    redis = await startRedis();
    upstream = await startCatalogueServer({
      era: '2026',
      tools: [tool('alpha'), tool('rotate_keys', { description: 'Rotate the signing keys of a repository' })],
    });
    const origin = upstream.url.replace(/\/mcp$/, '');
    const shared = ['--redis-url', redis.url, '--policy-domain', 'relay'];
    [a, b] = await Promise.all([
      startPolicyGate(origin, ['alpha', 'rotate_keys'], true, shared),
      startPolicyGate(origin, ['alpha', 'rotate_keys'], true, shared),
    ]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await upstream?.close();
    await redis?.close();
  });

  it('relays the change to the replica holding the listen stream, once', { timeout: 20_000 }, async () => {
    const stream = await listen(b.url, ALICE, 'listen-b');
    try {
      await stream.next('notifications/subscriptions/acknowledged');
      const search = (id: number, query: string) =>
        JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'search_tools', arguments: { query, limit: 1 }, _meta: MODERN_META },
        });
      const found = await post(
        a.url,
        search(2, 'rotate signing keys'),
        modernHeaders('tools/call', ALICE, 'search_tools'),
      );
      assert.equal(found.status, 200, found.text);
      const told = await stream.next('notifications/tools/list_changed');
      assert.deepEqual(told.params, { _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-b' } });

      // Bob's discovery through replica a is not alice's business; the same tool again for alice changes nothing.
      assert.equal(
        (await post(a.url, search(3, 'rotate signing keys'), modernHeaders('tools/call', BOB, 'search_tools'))).status,
        200,
      );
      assert.equal(
        (await post(a.url, search(4, 'rotate signing keys'), modernHeaders('tools/call', ALICE, 'search_tools')))
          .status,
        200,
      );
      // A new tool for alice is the next thing her stream hears.
      assert.equal(
        (await post(a.url, search(5, 'alpha'), modernHeaders('tools/call', ALICE, 'search_tools'))).status,
        200,
      );
      await stream.next('notifications/tools/list_changed');
      // Relayed messages arrive in publish order: a stray one for bob's or the repeated search would be here by now.
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(stream.count('notifications/tools/list_changed'), 2, 'one notification per change, none for bob');
    } finally {
      stream.close();
    }
  });
});
