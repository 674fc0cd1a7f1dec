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

  it('resumes a GET stream with Last-Event-ID, replaying what was missed', { timeout: 10_000 }, async () => {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    };
    const init = await fetch(gate.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    const sid = init.headers.get('mcp-session-id') as string;
    await init.text();
    await fetch(gate.url, {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': sid },
      body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    });
    const server = upstream.sessions.get(sid);
    assert.ok(server);

    const first = new AbortController();
    const stream = await fetch(gate.url, {
      headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
      signal: first.signal,
    });
    assert.equal(stream.headers.get('content-type'), 'text/event-stream');
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    server.sendToolListChanged();
    let text = '';
    while (!text.includes('notifications/tools/list_changed')) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += Buffer.from(chunk.value).toString();
    }
    const lastId = [...text.matchAll(/^id: (.+)$/gm)].at(-1)?.[1];
    assert.ok(lastId, `the event carries an id: ${text}`);
    first.abort();
    await waitFor(
      () => upstream.seen.filter((r) => r.method === 'GET' && r.headers['mcp-session-id'] === sid).length === 1,
    );
    await new Promise((r) => setTimeout(r, 50));

    server.sendLoggingMessage({ level: 'info', data: 'missed while away' }).catch(() => {});
    server.sendToolListChanged();
    await new Promise((r) => setTimeout(r, 50));
    const resumed = await fetch(gate.url, {
      headers: {
        accept: 'text/event-stream',
        'mcp-session-id': sid,
        'mcp-protocol-version': '2025-11-25',
        'last-event-id': lastId,
      },
    });
    assert.equal(resumed.status, 200);
    const replay = (resumed.body as ReadableStream<Uint8Array>).getReader();
    let replayed = '';
    while (!replayed.includes('notifications/tools/list_changed')) {
      const chunk = await replay.read();
      if (chunk.done) break;
      replayed += Buffer.from(chunk.value).toString();
    }
    await replay.cancel();
    assert.match(replayed, /notifications\/tools\/list_changed/, 'the missed notification was replayed');
    const get = upstream.seen.findLast((r) => r.method === 'GET' && r.headers['mcp-session-id'] === sid);
    assert.equal(get?.headers['last-event-id'], lastId, 'Last-Event-ID reached the server untouched');
    assert.doesNotMatch(
      replayed,
      new RegExp(`^id: ${lastId}$`, 'm'),
      'nothing before the resumption point is replayed',
    );
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
