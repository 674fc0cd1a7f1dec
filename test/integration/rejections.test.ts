import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { listenOnLoopback, readAll, type Listening } from '../helpers/http-server.ts';
import { post, rawExchange } from '../helpers/raw.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';

/** A value that must never appear in an error body or log line. */
const CANARY = 'canary-7f3a9c-secret';

function expectError(
  res: { status: number; text: string; json: () => any },
  status: number,
  rpcCode: number,
  code: string,
  id: unknown,
) {
  assert.equal(res.status, status, res.text);
  const body = res.json();
  assert.equal(body.jsonrpc, '2.0');
  assert.equal(body.id, id);
  assert.equal(body.error.code, rpcCode);
  assert.equal(body.error.data.code, code);
  assert.equal(typeof body.error.data.retryable, 'boolean');
  assert.ok(!res.text.includes(CANARY), 'the error body echoes nothing from the request');
}

const modern = { 'mcp-protocol-version': '2026-07-28' };
const call = (name: string, extra: object = {}) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 42,
    method: 'tools/call',
    params: { name, arguments: { secret: CANARY }, ...extra },
  });

const cases: {
  name: string;
  /**
   * Its 2026-07-28 headers name the method: without tracing or audit, a
   * transparent toolgate forwards it unread, for the server to check.
   */
  namedByHeaders?: true;
  body: string | Buffer;
  headers?: Record<string, string>;
  status: number;
  rpc: number;
  code: string;
  id: unknown;
}[] = [
  {
    name: 'malformed JSON',
    body: `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"${CANARY}"`,
    status: 400,
    rpc: -32700,
    code: 'parse_error',
    id: null,
  },
  {
    name: 'invalid UTF-8',
    body: Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping","x":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]),
    status: 400,
    rpc: -32700,
    code: 'parse_error',
    id: null,
  },
  {
    name: 'a JSON-RPC batch',
    body: `[{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"${CANARY}"}}]`,
    status: 400,
    rpc: -32600,
    code: 'invalid_request',
    id: null,
  },
  { name: 'a JSON scalar', body: '"hello"', status: 400, rpc: -32600, code: 'invalid_request', id: null },
  {
    name: 'a wrong jsonrpc version',
    body: `{"jsonrpc":"1.0","id":5,"method":"ping","params":{"x":"${CANARY}"}}`,
    status: 400,
    rpc: -32600,
    code: 'invalid_request',
    id: 5,
  },
  {
    name: 'an object id',
    body: '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
    status: 400,
    rpc: -32600,
    code: 'invalid_request',
    id: null,
  },
  {
    name: 'a null request id',
    body: '{"jsonrpc":"2.0","id":null,"method":"ping"}',
    status: 400,
    rpc: -32600,
    code: 'invalid_request',
    id: null,
  },
  {
    name: 'scalar params',
    body: '{"jsonrpc":"2.0","id":"s","method":"ping","params":3}',
    status: 400,
    rpc: -32600,
    code: 'invalid_request',
    id: 's',
  },
  {
    name: 'Mcp-Method that disagrees with the body',
    namedByHeaders: true,
    body: call('echo'),
    headers: { ...modern, 'mcp-method': 'tools/list', 'mcp-name': 'echo' },
    status: 400,
    rpc: -32020,
    code: 'header_mismatch',
    id: 42,
  },
  {
    name: 'Mcp-Name that disagrees with the body',
    namedByHeaders: true,
    body: call('delete_everything'),
    headers: { ...modern, 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
    status: 400,
    rpc: -32020,
    code: 'header_mismatch',
    id: 42,
  },
  {
    name: 'a base64 Mcp-Name that decodes to another name',
    namedByHeaders: true,
    body: call('delete_everything'),
    headers: {
      ...modern,
      'mcp-method': 'tools/call',
      'mcp-name': `=?base64?${Buffer.from('echo').toString('base64')}?=`,
    },
    status: 400,
    rpc: -32020,
    code: 'header_mismatch',
    id: 42,
  },
  {
    name: 'a malformed base64 Mcp-Name',
    namedByHeaders: true,
    body: call('echo'),
    headers: { ...modern, 'mcp-method': 'tools/call', 'mcp-name': '=?base64?%%%?=' },
    status: 400,
    rpc: -32020,
    code: 'header_mismatch',
    id: 42,
  },
  {
    name: 'a 2026-07-28 request without Mcp-Method',
    body: call('echo'),
    headers: { ...modern, 'mcp-name': 'echo' },
    status: 400,
    rpc: -32020,
    code: 'header_mismatch',
    id: 42,
  },
  {
    name: 'a 2026-07-28 tools/call without Mcp-Name',
    namedByHeaders: true,
    body: call('echo'),
    headers: { ...modern, 'mcp-method': 'tools/call' },
    status: 400,
    rpc: -32020,
    code: 'header_mismatch',
    id: 42,
  },
  {
    name: 'an envelope version that disagrees with MCP-Protocol-Version',
    body: call('echo', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } }),
    headers: { 'mcp-protocol-version': '2025-11-25', 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
    status: 400,
    rpc: -32020,
    code: 'header_mismatch',
    id: 42,
  },
  {
    name: 'a body claiming 2026-07-28 with no MCP-Protocol-Version header',
    body: call('echo', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } }),
    headers: { 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
    status: 400,
    rpc: -32020,
    code: 'header_mismatch',
    id: 42,
  },
  {
    name: 'a method name given twice',
    body: `{"jsonrpc":"2.0","id":9,"method":"ping","method":"tools/call","params":{"name":"x","arguments":{"a":"${CANARY}"}}}`,
    status: 400,
    rpc: -32600,
    code: 'duplicate_key',
    id: null,
  },
  {
    name: 'an argument given twice',
    body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"path":"${CANARY}","\\u0070ath":"/safe"}}}`,
    status: 400,
    rpc: -32600,
    code: 'duplicate_key',
    id: null,
  },
  {
    name: 'a method name given again in another letter case',
    body: `{"jsonrpc":"2.0","id":9,"method":"ping","Method":"tools/call","params":{"name":"x","arguments":{"a":"${CANARY}"}}}`,
    status: 400,
    rpc: -32600,
    code: 'duplicate_key',
    id: null,
  },
  {
    name: 'a tool name given again as "Name"',
    body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","Name":"delete_everything","arguments":{"a":"${CANARY}"}}}`,
    status: 400,
    rpc: -32600,
    code: 'duplicate_key',
    id: null,
  },
  {
    name: 'an argument given again with a long s (U+017F)',
    body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"pass":"${CANARY}","pa\u017f\u017f":"x"}}}`,
    status: 400,
    rpc: -32600,
    code: 'duplicate_key',
    id: null,
  },
  {
    name: 'arguments sent only as "Arguments"',
    body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","Arguments":{"a":"${CANARY}"}}}`,
    status: 400,
    rpc: -32600,
    code: 'case_variant_key',
    id: 9,
  },
  {
    name: 'params sent only as "paramſ"',
    body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","param\u017f":{"name":"echo","arguments":{"a":"${CANARY}"}}}`,
    status: 400,
    rpc: -32600,
    code: 'case_variant_key',
    id: 9,
  },
  {
    name: 'a body nested 600 levels deep',
    body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x","arguments":{"a":${'['.repeat(600)}"${CANARY}"${']'.repeat(600)}}}}`,
    status: 400,
    rpc: -32600,
    code: 'nesting_too_deep',
    id: null,
  },
  {
    name: 'a body over the limit',
    body: `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"${CANARY}${'x'.repeat(5000)}"}}`,
    status: 413,
    rpc: -31413,
    code: 'payload_too_large',
    id: null,
  },
];

describe('bad input is refused with a registry error and nothing reaches upstream', () => {
  let upstream: Listening;
  let gate: RunningToolgate;
  /** The same settings with audit on: every message is read and classified, even one its 2026-07-28 headers name. */
  let classifying: RunningToolgate;
  let auditDir: string;
  const received: string[] = [];

  before(async () => {
    upstream = await listenOnLoopback(async (req, res) => {
      const body = (await readAll(req)).toString('utf8');
      if (req.method === 'POST') received.push(body);
      if (req.method === 'POST' && !body.includes('"id"')) {
        res.writeHead(202).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { path: req.url, method: req.method } }));
    });
    const limits = ['--max-body-bytes', '4096', '--max-headers', '20', '--max-header-bytes', '2048'];
    gate = await startToolgate(upstream.origin, limits);
    auditDir = mkdtempSync(join(tmpdir(), 'toolgate-rejections-'));
    classifying = await startToolgate(upstream.origin, [...limits, '--audit-log', join(auditDir, 'audit.jsonl')]);
    await Promise.all([gate.ready, classifying.ready]);
  });
  after(async () => {
    await gate.close();
    await classifying.close();
    await upstream.close();
    rmSync(auditDir, { recursive: true, force: true });
  });

  for (const c of cases) {
    it(`refuses ${c.name}`, async () => {
      for (const g of c.namedByHeaders === true ? [classifying] : [gate, classifying]) {
        const before = received.length;
        const res = await post(g.url, c.body, c.headers);
        expectError(res, c.status, c.rpc, c.code, c.id);
        assert.equal(received.length, before, 'nothing was forwarded');
      }
    });
  }

  it('ignores Mcp-* headers that arrive without a 2026-07-28 protocol version: the body decides', async () => {
    const res = await post(gate.url, call('echo'), {
      'mcp-protocol-version': '2025-11-25',
      'mcp-method': 'tools/list',
      'mcp-name': 'other',
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-upstream'], 'yes');
  });

  it('passes notifications through and relays the upstream 202', async () => {
    const res = await post(gate.url, '{"jsonrpc":"2.0","method":"notifications/initialized"}');
    assert.equal(res.status, 202);
    assert.equal(res.text, '');
  });

  it('refuses an oversized Content-Length before reading the body', async () => {
    const text = await rawExchange(gate.port, [
      'POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 999999999\r\n\r\n{"jsonrpc":',
    ]);
    assert.match(text, /^HTTP\/1\.1 413 /);
    assert.match(text, /"code":"payload_too_large"/);
  });

  it('refuses a chunked body as soon as it crosses the limit', async () => {
    const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
    const parts = [
      'POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
    ];
    for (let i = 0; i < 10; i++) parts.push(chunk('x'.repeat(1000)));
    const text = await rawExchange(gate.port, parts, 3000, 20);
    assert.match(text, /^HTTP\/1\.1 413 /);
    assert.match(text, /connection: close/i);
  });

  it('refuses too many header fields with 431', async () => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < 25; i++) headers[`x-extra-${i}`] = CANARY;
    const res = await post(gate.url, '{"jsonrpc":"2.0","id":1,"method":"ping"}', headers);
    expectError(res, 431, -31431, 'headers_too_large', null);
  });

  it('refuses an oversized request head with 431 and a JSON body', async () => {
    const text = await rawExchange(gate.port, [
      `GET /mcp HTTP/1.1\r\nhost: x\r\nx-big: ${CANARY}${'a'.repeat(4000)}\r\n\r\n`,
    ]);
    assert.match(text, /^HTTP\/1\.1 431 /);
    assert.match(text, /"code":"headers_too_large"/);
    assert.ok(!text.includes(CANARY));
  });

  it('answers other HTTP methods on the MCP path with 405 and Allow', async () => {
    const text = await rawExchange(gate.port, [
      'PUT /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\nconnection: close\r\n\r\n',
    ]);
    assert.match(text, /^HTTP\/1\.1 405 /);
    assert.match(text, /allow: POST, GET, DELETE/i);
    assert.match(text, /"code":"method_not_allowed"/);
  });

  it('passes other paths through unchanged', async () => {
    const res = await fetch(`http://127.0.0.1:${gate.port}/.well-known/oauth-protected-resource?x=1`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-upstream'), 'yes');
    assert.deepEqual(((await res.json()) as { result: unknown }).result, {
      path: '/.well-known/oauth-protected-resource?x=1',
      method: 'GET',
    });
  });
});

describe('a transparent toolgate forwards what 2026-07-28 headers name, unread, when nothing listens for the message', () => {
  let upstream: Listening;
  let gate: RunningToolgate;
  const received: string[] = [];

  before(async () => {
    upstream = await listenOnLoopback(async (req, res) => {
      received.push((await readAll(req)).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 42, result: { method: req.method } }));
    });
    gate = await startToolgate(upstream.origin, ['--max-body-bytes', '4096']);
    await gate.ready;
  });
  after(async () => {
    await gate.close();
    await upstream.close();
  });

  for (const c of cases.filter((k) => k.namedByHeaders === true)) {
    it(`forwards ${c.name}: the server checks the body against the headers`, async () => {
      const before = received.length;
      const res = await post(gate.url, c.body, c.headers);
      assert.equal(res.status, 200, res.text);
      assert.equal(
        (res.json() as unknown as { result: { method: string } }).result.method,
        'POST',
        'the upstream answered',
      );
      assert.deepEqual(received.slice(before), [c.body.toString()], 'the body went on byte for byte');
    });
  }

  const named = { ...modern, 'mcp-method': 'tools/call', 'mcp-name': 'echo' };

  it('forwards a body that is not JSON at all, and counts it by its Mcp-Method', async () => {
    const before = received.length;
    const body = `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"s":"${CANARY}"}`;
    const res = await post(gate.url, body, named);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(received.slice(before), [body]);
    const metrics = await (await fetch(`${gate.adminUrl}/metrics`)).text();
    assert.match(metrics, /toolgate_requests_total\{[^}]*method="tools\/call"[^}]*\} [1-9]/);
  });

  it('still refuses a body over the limit before it reaches the server', async () => {
    const before = received.length;
    const body = call('echo', { pad: 'x'.repeat(5000) });
    const res = await post(gate.url, body, named);
    expectError(res, 413, -31413, 'payload_too_large', null);
    assert.equal(received.length, before, 'nothing was forwarded');
  });

  it('reads a body it forwarded unread for the id of an error it answers itself', async () => {
    const dead = await listenOnLoopback(() => {});
    await dead.close();
    const orphan = await startToolgate(dead.origin);
    try {
      expectError(await post(orphan.url, call('echo'), named), 502, -31502, 'upstream_unavailable', 42);
      // Nothing readable: the error carries a null id.
      expectError(await post(orphan.url, `{"id":42,"s":"${CANARY}"`, named), 502, -31502, 'upstream_unavailable', null);
    } finally {
      await orphan.close();
    }
  });
});

describe('upstream failures become upstream_unavailable carrying the request id', () => {
  it('answers 502 when the upstream refuses connections', async () => {
    const dead = await listenOnLoopback(() => {});
    const origin = dead.origin;
    await dead.close();
    const gate = await startToolgate(origin);
    try {
      const res = await post(
        gate.url,
        `{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"x","arguments":{"s":"${CANARY}"}}}`,
      );
      expectError(res, 502, -31502, 'upstream_unavailable', 'r1');
    } finally {
      await gate.close();
    }
  });

  it('answers 502 when the upstream resets the connection', async () => {
    const upstream = await listenOnLoopback((req) => {
      req.socket.destroy();
    });
    const gate = await startToolgate(upstream.origin);
    try {
      const res = await post(gate.url, '{"jsonrpc":"2.0","id":7,"method":"ping"}');
      expectError(res, 502, -31502, 'upstream_unavailable', 7);
    } finally {
      await gate.close();
      await upstream.close();
    }
  });

  it('answers 504 when the upstream does not answer in time', async () => {
    const upstream = await listenOnLoopback((req, res) => {
      if (req.method === 'OPTIONS') res.writeHead(204).end();
    });
    const gate = await startToolgate(upstream.origin, ['--upstream-timeout-ms', '200']);
    try {
      await gate.ready;
      const res = await post(gate.url, '{"jsonrpc":"2.0","id":8,"method":"ping"}');
      expectError(res, 504, -31504, 'upstream_unavailable', 8);
    } finally {
      await gate.close();
      await upstream.close();
    }
  });

  it('aborts the upstream request when the client disconnects', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((resolve) => {
      upstreamClosed = resolve;
    });
    let arrived!: () => void;
    const reached = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const upstream = await listenOnLoopback((req, res) => {
      if (req.method === 'OPTIONS') {
        res.writeHead(204).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      res.on('close', upstreamClosed);
      arrived();
    });
    const gate = await startToolgate(upstream.origin);
    try {
      const ac = new AbortController();
      const pending = fetch(gate.url, {
        method: 'POST',
        signal: ac.signal,
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}',
      }).then((r) => r.body?.getReader().read());
      await reached;
      ac.abort();
      await pending.catch(() => {});
      await closed;
    } finally {
      await gate.close();
      await upstream.close();
    }
  });
});

describe('readiness', () => {
  it('is not ready until the upstream has answered', async () => {
    const dead = await listenOnLoopback(() => {});
    const port = Number(new URL(dead.origin).port);
    await dead.close();
    const gate = await startToolgate(`http://127.0.0.1:${port}`);
    try {
      const first = await fetch(`${gate.adminUrl}/readyz`);
      assert.equal(first.status, 503);
      assert.deepEqual(((await first.json()) as { reasons: unknown }).reasons, ['upstream_not_answered']);
      const { createServer } = await import('node:http');
      const revived = createServer((_req, res) => res.writeHead(204).end());
      revived.listen(port, '127.0.0.1');
      await once(revived, 'listening');
      await gate.ready;
      assert.equal((await fetch(`${gate.adminUrl}/readyz`)).status, 200);
      assert.equal((await fetch(`${gate.adminUrl}/healthz`)).status, 200);
      revived.closeAllConnections();
      revived.close();
    } finally {
      await gate.close();
    }
  });
});
