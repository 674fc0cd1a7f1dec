import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { listenOnLoopback, readAll, type Listening } from '../helpers/http-server.ts';
import { rawExchange } from '../helpers/raw.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';

/** What reaches the server, seen from a raw client: the fields a proxy must drop, add or leave alone. */
describe('request fields on the way upstream', () => {
  let upstream: Listening;
  let gate: RunningToolgate;
  let seen: { headers: IncomingHttpHeaders; body: string }[] = [];

  before(async () => {
    upstream = await listenOnLoopback(async (req, res) => {
      const body = (await readAll(req)).toString('utf8');
      if (req.method === 'POST') seen.push({ headers: req.headers, body });
      res
        .writeHead(req.method === 'OPTIONS' ? 204 : 200, { 'content-type': 'application/json' })
        .end(req.method === 'OPTIONS' ? undefined : '{"jsonrpc":"2.0","id":1,"result":{}}');
    });
    gate = await startToolgate(upstream.origin);
    await gate.ready;
  });
  after(async () => {
    await gate.close();
    await upstream.close();
  });

  const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
  const post = (fields: string) =>
    `POST /mcp HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n${fields}content-length: ${ping.length}\r\nconnection: close\r\n\r\n`;

  it('drops hop-by-hop fields and those Connection names, keeps the rest, and appends the peer to X-Forwarded-For', async () => {
    seen = [];
    const text = await rawExchange(gate.port, [
      `${post('connection: x-hop\r\nx-hop: 1\r\nkeep-alive: timeout=5\r\nproxy-authorization: Basic Zm9vOmJhcg==\r\nte: trailers\r\nx-forwarded-for: 203.0.113.7\r\nx-kept: yes\r\n')}${ping}`,
    ]);
    assert.match(text, /^HTTP\/1\.1 200 /);
    const h = seen[0]!.headers;
    for (const name of ['x-hop', 'keep-alive', 'proxy-authorization', 'te'])
      assert.equal(h[name], undefined, `${name} reached the server`);
    assert.equal(h['x-kept'], 'yes');
    assert.equal(h['x-forwarded-for'], '203.0.113.7, 127.0.0.1');
    assert.equal(seen[0]!.body, ping);
  });

  it('answers Expect: 100-continue itself and forwards the body without the field', async () => {
    seen = [];
    const text = await rawExchange(gate.port, [post('expect: 100-continue\r\n'), ping], 2000, 50);
    assert.match(text, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.headers.expect, undefined);
    assert.equal(seen[0]!.body, ping);
  });

  it('refuses an MCP header given twice, which Node joins and servers may read either copy of', async () => {
    seen = [];
    for (const fields of [
      'mcp-protocol-version: 2026-07-28\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: delete_repo\r\n',
      'mcp-protocol-version: 2026-07-28\r\nmcp-method: ping\r\nMcp-Method: tools/call\r\n',
      'mcp-session-id: a\r\nmcp-session-id: b\r\n',
    ]) {
      const text = await rawExchange(gate.port, [`${post(fields)}${ping}`]);
      assert.match(text, /^HTTP\/1\.1 400 /, fields);
      assert.match(text, /"code":"header_mismatch"/);
    }
    const get = await rawExchange(gate.port, [
      'GET /mcp HTTP/1.1\r\nhost: t\r\naccept: text/event-stream\r\nmcp-session-id: a\r\nmcp-session-id: b\r\nconnection: close\r\n\r\n',
    ]);
    assert.match(get, /^HTTP\/1\.1 400 /);
    assert.equal(seen.length, 0, 'nothing was forwarded');
  });

  it('drops Mcp-Method and Mcp-Name it ignored (no 2026-07-28 version), keeps those it checked', async () => {
    seen = [];
    await rawExchange(gate.port, [
      `${post('mcp-protocol-version: 2025-11-25\r\nmcp-method: tools/call\r\nmcp-name: delete_repo\r\n')}${ping}`,
    ]);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.headers['mcp-method'], undefined);
    assert.equal(seen[0]!.headers['mcp-name'], undefined);
    assert.equal(seen[0]!.headers['mcp-protocol-version'], '2025-11-25');
    const modern =
      '{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}';
    const head = `POST /mcp HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: ping\r\ncontent-length: ${modern.length}\r\nconnection: close\r\n\r\n`;
    assert.match(await rawExchange(gate.port, [`${head}${modern}`]), /^HTTP\/1\.1 200 /);
    assert.equal(seen[1]!.headers['mcp-method'], 'ping');
  });
});
