import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, it } from 'node:test';
import { failureCode, openLink, type LinkOptions, type UpstreamLink } from '../../src/catalogue/upstream.ts';
import { listenOnLoopback, readAll } from '../helpers/http-server.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * The catalogue link against servers that answer oddly, on real HTTP: how
 * the era probe reads each answer, what a refusal is called, and that no
 * code carries the server's text. (Real SDK servers of both eras:
 * catalogue.test.ts.)
 */

interface Seen {
  readonly method: string;
  readonly rpc: string | undefined;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown> | undefined;
}
type Answer = (seen: Seen, res: ServerResponse) => void;

const SECRET = 'upstream-secret-text';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function serve(answer: Answer): Promise<{ url: URL; seen: Seen[] }> {
  const seen: Seen[] = [];
  const listening = await listenOnLoopback(async (req, res) => {
    const text = (await readAll(req)).toString('utf8');
    const body = text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>);
    const s = {
      method: req.method ?? '',
      rpc: typeof body?.method === 'string' ? body.method : undefined,
      headers: req.headers,
      body,
    };
    seen.push(s);
    answer(s, res);
  });
  cleanups.push(() => listening.close());
  return { url: new URL(`${listening.origin}/mcp`), seen };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}
const reply = (s: Seen, result: unknown) => ({ jsonrpc: '2.0', id: s.body?.id, result });
const rpcError = (s: Seen, code: number, data?: unknown) => ({
  jsonrpc: '2.0',
  id: s.body?.id ?? null,
  error: { code, message: SECRET, ...(data !== undefined && { data }) },
});

/** A 2025 server: refuses the probe as `probe` says, then initialize, a session and one page of tools. */
function legacy(probe: (s: Seen, res: ServerResponse) => void, version = '2025-11-25'): Answer {
  return (s, res) => {
    if (s.rpc === 'server/discover') return probe(s, res);
    if (s.method === 'GET') return void res.writeHead(405).end();
    if (s.method === 'DELETE') return void res.writeHead(200).end();
    if (s.rpc === 'initialize')
      return json(
        res,
        200,
        reply(s, { protocolVersion: version, capabilities: { tools: {} }, serverInfo: { name: 'x', version: '1' } }),
        { 'mcp-session-id': 'sess-1' },
      );
    if (s.rpc === 'notifications/initialized') return void res.writeHead(202).end();
    if (s.rpc === 'tools/list') return json(res, 200, reply(s, { tools: [{ name: 'alpha' }] }));
    json(res, 404, rpcError(s, -32601));
  };
}

async function open(url: URL, extra: Partial<LinkOptions> = {}): Promise<UpstreamLink> {
  const link = await openLink({
    url,
    requestTimeoutMs: 2000,
    signal: new AbortController().signal,
    onListChanged: () => {},
    onTrouble: () => {},
    onLost: () => {},
    ...extra,
  });
  cleanups.push(() => link.close());
  return link;
}

async function refusal(url: URL): Promise<string> {
  const e = await openLink({
    url,
    requestTimeoutMs: 2000,
    signal: new AbortController().signal,
    onListChanged: () => {},
    onTrouble: () => {},
    onLost: () => {},
  }).then(
    async (link) => {
      await link.close();
      assert.fail('the link opened');
    },
    (err: unknown) => err,
  );
  assert.ok(!String(e instanceof Error ? e.message : e).includes(SECRET), 'no upstream text in the error');
  return failureCode(e);
}

describe('catalogue link: the era probe', () => {
  const legacyAnswers: [string, (s: Seen, res: ServerResponse) => void][] = [
    ['404 with a session error (an SDK v1 server)', (s, res) => json(res, 404, rpcError(s, -32001))],
    ['400 without a JSON-RPC body', (_s, res) => void res.writeHead(400, { 'content-type': 'text/plain' }).end(SECRET)],
    ['405', (_s, res) => void res.writeHead(405).end()],
    ['200 with method not found', (s, res) => json(res, 200, rpcError(s, -32601))],
    ['200 with a result that is no discover result', (s, res) => json(res, 200, reply(s, { something: 'else' }))],
    [
      'a version refusal listing only 2025 versions',
      (s, res) => json(res, 400, rpcError(s, -32022, { supported: ['2025-11-25', '2025-06-18'] })),
    ],
  ];
  for (const [what, probe] of legacyAnswers) {
    it(`falls back to the 2025 handshake on ${what}`, async () => {
      const { url, seen } = await serve(legacy(probe));
      const link = await open(url);
      assert.equal(link.era, 'legacy');
      assert.deepEqual(await link.listPage(undefined), { tools: [{ name: 'alpha' }] });
      const list = seen.find((s) => s.rpc === 'tools/list');
      assert.equal(list?.headers['mcp-session-id'], 'sess-1');
      assert.equal(list?.headers['mcp-protocol-version'], '2025-11-25');
    });
  }

  it('probes with the 2026-07-28 headers and _meta, and uses a modern server statelessly', async () => {
    const { url, seen } = await serve((s, res) => {
      if (s.rpc === 'server/discover')
        return json(res, 200, reply(s, { supportedVersions: ['2026-07-28'], capabilities: { tools: {} } }));
      if (s.rpc === 'tools/list') return json(res, 200, reply(s, { tools: [], nextCursor: 'n' }));
      json(res, 404, rpcError(s, -32601));
    });
    const link = await open(url);
    assert.equal(link.era, 'modern');
    assert.deepEqual(await link.listPage('c1'), { tools: [], nextCursor: 'n' });
    const [probe, list] = seen;
    assert.equal(probe?.headers['mcp-protocol-version'], '2026-07-28');
    assert.equal(probe?.headers['mcp-method'], 'server/discover');
    assert.equal(list?.headers['mcp-method'], 'tools/list');
    const params = list?.body?.params as { cursor?: unknown; _meta?: Record<string, unknown> } | undefined;
    assert.equal(params?.cursor, 'c1');
    assert.equal(params?._meta?.['io.modelcontextprotocol/protocolVersion'], '2026-07-28');
    assert.equal(
      seen.some((s) => s.rpc === 'initialize' || s.headers['mcp-session-id'] !== undefined),
      false,
    );
  });

  it('reads a reply sent as an SSE stream, notifications before it included, a character split between chunks too', async () => {
    let changed = 0;
    const { url } = await serve((s, res) => {
      if (s.rpc === 'server/discover')
        return json(res, 200, reply(s, { supportedVersions: ['2026-07-28'], capabilities: {} }));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': keep-alive\n\n');
      res.write(
        `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`,
      );
      // The reply cut in the middle of the two bytes of "é", sent apart.
      const bytes = Buffer.from(`data: ${JSON.stringify(reply(s, { tools: [{ name: 'é' }] }))}\n\n`);
      const cut = bytes.indexOf(0xc3) + 1;
      res.write(bytes.subarray(0, cut));
      setTimeout(() => res.end(bytes.subarray(cut)), 30);
    });
    const link = await open(url, { onListChanged: () => changed++ });
    assert.deepEqual(await link.listPage(undefined), { tools: [{ name: 'é' }] });
    assert.equal(changed, 1);
  });

  const refusals: [string, Answer, string][] = [
    [
      '401 to the probe',
      (_s, res) => void res.writeHead(401, { 'www-authenticate': 'Bearer' }).end(SECRET),
      'http_401',
    ],
    ['403 to the probe', (_s, res) => void res.writeHead(403).end(SECRET), 'http_403'],
    ['503 to the probe', (_s, res) => void res.writeHead(503).end(SECRET), 'http_503'],
    [
      'a version refusal listing only modern versions toolgate does not speak',
      (s, res) => json(res, 400, rpcError(s, -32022, { supported: ['2027-01-01'] })),
      'jsonrpc_-32022',
    ],
    [
      'an initialize answered with an unknown version',
      legacy((s, res) => json(res, 404, rpcError(s, -32001)), '2099-01-01'),
      'unsupported_protocol_version',
    ],
    [
      'an initialize answered with a JSON-RPC error',
      (s, res) => (s.rpc === 'initialize' ? json(res, 200, rpcError(s, -32603)) : json(res, 404, rpcError(s, -32001))),
      'jsonrpc_-32603',
    ],
    [
      'a probe answered with text that is not JSON',
      (_s, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(SECRET),
      'malformed_reply',
    ],
    [
      'a probe answered with another id only',
      (_s, res) => json(res, 200, { jsonrpc: '2.0', id: 999, result: { supportedVersions: ['2026-07-28'] } }),
      'no_reply',
    ],
  ];
  for (const [what, answer, code] of refusals) {
    it(`refuses ${what} with ${code}, echoing nothing`, async () => {
      const { url } = await serve(answer);
      assert.equal(await refusal(url), code);
    });
  }

  it('names a refused connection by its socket error', async () => {
    const { url } = await serve(() => {});
    await cleanups.pop()?.();
    assert.equal(await refusal(url), 'net_econnrefused');
  });

  it('gives up on a server that never answers after requestTimeoutMs', async () => {
    const { url } = await serve(() => {});
    const e = await openLink({
      url,
      requestTimeoutMs: 200,
      signal: new AbortController().signal,
      onListChanged: () => {},
      onTrouble: () => {},
      onLost: () => {},
    }).catch((err: unknown) => err);
    assert.equal(failureCode(e), 'request_timeout');
  });
});

describe('catalogue link: notification streams and close', () => {
  it('2025: hears list_changed on the GET stream, reopens a dropped one as trouble, and ends the session with DELETE', async () => {
    let streams = 0;
    const open2025 = new Set<ServerResponse>();
    const base = legacy((s, res) => json(res, 404, rpcError(s, -32001)));
    const { url, seen } = await serve((s, res) => {
      if (s.method !== 'GET') return base(s, res);
      streams++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`);
      open2025.add(res);
    });
    let changed = 0;
    let trouble = 0;
    const link = await open(url, { onListChanged: () => changed++, onTrouble: () => trouble++ });
    await waitFor(() => changed === 1, 'list_changed on the GET stream');
    assert.equal(seen.find((s) => s.method === 'GET')?.headers['mcp-session-id'], 'sess-1');
    for (const res of open2025) res.end();
    await waitFor(() => trouble === 1 && streams === 2, 'a dropped stream reported and reopened', 10_000);
    await link.close();
    assert.equal(seen.at(-1)?.method, 'DELETE');
    assert.equal(seen.at(-1)?.headers['mcp-session-id'], 'sess-1');
  });

  it('2026-07-28: listens for tool list changes when the server offers them; the stream ending loses the link', async () => {
    let listen: ServerResponse | undefined;
    const { url, seen } = await serve((s, res) => {
      if (s.rpc === 'server/discover')
        return json(
          res,
          200,
          reply(s, { supportedVersions: ['2026-07-28'], capabilities: { tools: { listChanged: true } } }),
        );
      if (s.rpc === 'subscriptions/listen') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: { toolsListChanged: true } } })}\n\n`,
        );
        res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`);
        listen = res;
        return;
      }
      json(res, 404, rpcError(s, -32601));
    });
    let changed = 0;
    let lost = 0;
    await open(url, { onListChanged: () => changed++, onLost: () => lost++ });
    await waitFor(() => changed === 1, 'list_changed on the listen stream');
    const request = seen.find((s) => s.rpc === 'subscriptions/listen');
    assert.deepEqual((request?.body?.params as { notifications?: unknown } | undefined)?.notifications, {
      toolsListChanged: true,
    });
    assert.equal(request?.headers['mcp-method'], 'subscriptions/listen');
    assert.equal(lost, 0);
    listen?.end(`data: ${JSON.stringify(reply(request, { resultType: 'complete' }))}\n\n`);
    await waitFor(() => lost === 1, 'the ended stream reported as lost');
  });

  it('2026-07-28: a server that refuses the listen stream is trouble once, not a lost link reconnected for ever', async () => {
    const { url, seen } = await serve((s, res) => {
      if (s.rpc === 'server/discover')
        return json(
          res,
          200,
          reply(s, { supportedVersions: ['2026-07-28'], capabilities: { tools: { listChanged: true } } }),
        );
      json(res, 404, rpcError(s, -32601));
    });
    let trouble = 0;
    let lost = 0;
    await open(url, { onTrouble: () => trouble++, onLost: () => lost++ });
    await waitFor(() => trouble === 1, 'the refused stream reported');
    assert.equal(lost, 0);
    assert.equal(seen.filter((s) => s.rpc === 'subscriptions/listen').length, 1);
  });

  it('does not listen when the server does not offer tool list changes, and close() reports nothing', async () => {
    const { url, seen } = await serve((s, res) => {
      if (s.rpc === 'server/discover')
        return json(res, 200, reply(s, { supportedVersions: ['2026-07-28'], capabilities: { tools: {} } }));
      json(res, 404, rpcError(s, -32601));
    });
    let called = 0;
    const link = await openLink({
      url,
      requestTimeoutMs: 2000,
      signal: new AbortController().signal,
      onListChanged: () => called++,
      onTrouble: () => called++,
      onLost: () => called++,
    });
    await link.close();
    assert.deepEqual(
      seen.map((s) => s.rpc),
      ['server/discover'],
    );
    assert.equal(called, 0);
  });
});
