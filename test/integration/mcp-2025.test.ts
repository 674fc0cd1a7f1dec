import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';
import { startV1Server, type V1Server } from '../helpers/mcp-v1-server.ts';

describe('2025-11-25 sessions through toolgate (v1 SDK client and server)', () => {
  let upstream: V1Server;
  let gate: RunningToolgate;
  let client: Client;
  let transport: StreamableHTTPClientTransport;

  before(async () => {
    upstream = await startV1Server();
    gate = await startToolgate(upstream.origin);
    await gate.ready;
    client = new Client({ name: 'it', version: '1.0.0' });
    transport = new StreamableHTTPClientTransport(new URL(gate.url));
    await client.connect(transport);
  });
  after(async () => {
    await client.close();
    await gate.close();
    await upstream.close();
  });

  it('initializes and carries the session id both ways', () => {
    assert.match(transport.sessionId ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(client.getServerVersion()?.name, 'v1-fixture');
    const posts = upstream.seen.filter((r) => r.method === 'POST' && r.headers['mcp-session-id'] !== undefined);
    assert.ok(posts.every((r) => r.headers['mcp-session-id'] === transport.sessionId));
    assert.ok(posts.length >= 1, 'the initialized notification reached upstream with the session id');
  });

  it('lists and calls tools', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['count', 'echo']);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'héllo ✓' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'héllo ✓' }]);
  });

  it('streams progress notifications over an SSE response', async () => {
    const progress: number[] = [];
    const result = await client.callTool({ name: 'count', arguments: { n: 5 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    assert.deepEqual(progress, [1, 2, 3, 4, 5]);
    assert.deepEqual(result.content, [{ type: 'text', text: 'counted to 5' }]);
  });

  it('delivers server-initiated notifications on the GET stream', async () => {
    const sid = transport.sessionId as string;
    const server = upstream.sessions.get(sid);
    assert.ok(server, 'upstream knows the session');
    await waitFor(() => upstream.seen.some((r) => r.method === 'GET' && r.headers['mcp-session-id'] === sid));
    const received = new Promise<void>((resolve) => {
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve());
    });
    server.sendToolListChanged();
    await received;
  });

  it('terminates the session with DELETE', async () => {
    const sid = transport.sessionId as string;
    await transport.terminateSession();
    const del = upstream.seen.find((r) => r.method === 'DELETE');
    assert.equal(del?.headers['mcp-session-id'], sid);
    await waitFor(() => !upstream.sessions.has(sid));
  });
});

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), 'condition reached');
}
