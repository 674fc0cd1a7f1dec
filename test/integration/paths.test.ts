import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { listenOnLoopback, readAll, type Listening } from '../helpers/http-server.ts';
import { rawExchange } from '../helpers/raw.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';

const KEY = 'alice-paths-5e2b9c7d1a3f';
const CANARY = 'canary-path-0b7e4d';
const call = JSON.stringify({
  jsonrpc: '2.0',
  id: 3,
  method: 'tools/call',
  params: { name: 'delete_repo', arguments: {} },
});

/**
 * The policy must hold whatever spelling of the MCP path a client sends: a
 * server that routes "/MCP", "/mcp/" or an absolute-form target to its MCP
 * handler (Express does) would otherwise be reached without any check.
 */
describe('request targets under a policy', () => {
  let dir: string;
  let upstream: Listening;
  let gate: RunningToolgate;
  let transparent: RunningToolgate;
  const seen: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-paths-'));
    // A minimal MCP server (enough for toolgate's catalogue sync) that notes the target of everything else.
    upstream = await listenOnLoopback(async (req, res) => {
      const message = JSON.parse((await readAll(req)).toString('utf8') || '{}') as { id?: unknown; method?: string };
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      const result =
        message.method === 'initialize'
          ? { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'paths', version: '1' } }
          : { tools: [{ name: 'delete_repo', inputSchema: { type: 'object' } }] };
      if (message.method !== 'initialize' && message.method !== 'tools/list') seen.push(`${req.method} ${req.url}`);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    });
    await writeFile(
      join(dir, 'keys.yaml'),
      `keys:\n  - { sha256: ${createHash('sha256').update(KEY).digest('hex')}, principal: alice, scopes: [] }\n`,
    );
    await writeFile(
      join(dir, 'policy.yaml'),
      'version: 1\nauthentication:\n  staticKeys: { file: keys.yaml }\ngrants: []\n',
    );
    gate = await startToolgate(upstream.origin, [
      '--policy-file',
      join(dir, 'policy.yaml'),
      '--passthrough-paths',
      '/.well-known/,/status',
    ]);
    transparent = await startToolgate(upstream.origin);
    await Promise.all([gate.ready, transparent.ready]);
  });
  after(async () => {
    await Promise.all([gate.close(), transparent.close()]);
    await upstream.close();
    await rm(dir, { recursive: true, force: true });
  });

  const send = (port: number, target: string, headers = '', body = call) =>
    rawExchange(port, [
      `POST ${target} HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n${headers}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    ]);
  const status = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
  const code = (text: string) => /"code":"([a-z_]+)"/.exec(text)?.[1];

  it('checks every spelling of the MCP path: no credential 401, a call without a grant refused, nothing forwarded', async () => {
    const before = seen.length;
    for (const target of ['/MCP', '/mcp/', '//mcp', '/x/../mcp', '/%6Dcp', '/mcp;x=1', 'http://evil.example/mcp']) {
      const anonymous = await send(gate.port, target);
      assert.equal(status(anonymous), 401, target);
      assert.equal(code(anonymous), 'unauthenticated', target);
      const denied = await send(gate.port, target, `authorization: Bearer ${KEY}\r\n`);
      assert.equal(status(denied), 200, target);
      assert.match(denied, /"isError":true/, target);
      assert.equal(code(denied), 'tool_not_granted', target);
    }
    assert.deepEqual(seen.slice(before), []);
  });

  it('forwards an allowed request on an odd spelling to the plain MCP path', async () => {
    const before = seen.length;
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' });
    assert.equal(status(await send(gate.port, '/MCP/?x=1', `authorization: Bearer ${KEY}\r\n`, ping)), 200);
    assert.deepEqual(seen.slice(before), ['POST /mcp?x=1']);
  });

  it('answers other paths 404 not_found unless listed, and forwards the listed ones unchecked, normalised', async () => {
    const before = seen.length;
    for (const target of ['/sse', '/messages?sessionId=1', '/mcpx', '/mcp/messages', '/statusx']) {
      const text = await send(gate.port, target);
      assert.equal(status(text), 404, target);
      assert.equal(code(text), 'not_found', target);
    }
    assert.deepEqual(seen.slice(before), []);
    assert.equal(status(await send(gate.port, '/.well-known/../.well-known/oauth-protected-resource')), 200);
    assert.equal(status(await send(gate.port, '/status/live')), 200);
    assert.deepEqual(seen.slice(before), ['POST /.well-known/oauth-protected-resource', 'POST /status/live']);
  });

  it('refuses ambiguous targets with 400 invalid_path, echoing nothing of them', async () => {
    const before = seen.length;
    for (const target of [`/mcp%2F${CANARY}`, `/${CANARY}%2e%2e/mcp`, `/mcp%5C${CANARY}`, `/${CANARY}%zz`]) {
      const text = await send(gate.port, target);
      assert.equal(status(text), 400, target);
      assert.equal(code(text), 'invalid_path', target);
      assert.ok(!text.includes(CANARY), 'the error echoes the target');
    }
    assert.equal(code(await send(transparent.port, '/mcp%2f')), 'invalid_path');
    assert.deepEqual(seen.slice(before), []);
  });

  it('without a policy forwards every other path, normalised', async () => {
    const before = seen.length;
    assert.equal(status(await send(transparent.port, '/a//b/../sse')), 200);
    assert.deepEqual(seen.slice(before), ['POST /a/sse']);
  });
});
