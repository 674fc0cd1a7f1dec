/**
 * Timeouts and limits at both ends of the proxy, against a real MCP server
 * that misbehaves on request (issue 16: D3, D7, D9, D10).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startFaultUpstream, type FaultUpstream } from '../helpers/fault-upstream.ts';
import { post, refusedCall } from '../helpers/raw.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';

const POLICY = [
  'version: 1',
  'authentication:',
  '  anonymous: { enabled: true }',
  // A deadline far past the idle bound: only the bound can cut the stalled body in time.
  'tools:',
  '  stall_body: { timeoutMs: 60000 }',
  'grants:',
  '  - { principal: anonymous, tool: echo, effect: allow }',
  '  - { principal: anonymous, tool: stall_head, effect: allow }',
  '  - { principal: anonymous, tool: stall_body, effect: allow }',
  '',
].join('\n');
const call = (id: number, name: string) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { text: 'x' } } });
/** Far below the 30 s the built-in per-tool default used to impose, far above the 300 ms configured. */
const PATIENCE_MS = 10_000;

function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
}

/** Reads from `socket` until a whole response head (and its content-length body) arrived, or the socket ends. */
function readResponse(socket: Socket): Promise<{ text: string; ended: boolean; error: string | undefined }> {
  return new Promise((resolve) => {
    let text = '';
    const finish = (ended: boolean, error?: string) => {
      socket.removeAllListeners('data');
      resolve({ text, ended, error });
    };
    socket.on('data', (d) => {
      text += d.toString('utf8');
      const head = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text)?.[1];
      if (head >= 0 && length !== undefined && text.length >= head + 4 + Number(length)) finish(false);
    });
    socket.once('end', () => finish(true));
    socket.once('error', (err: NodeJS.ErrnoException) => finish(true, err.code));
  });
}

describe('timeouts and limits', () => {
  let dir: string;
  let upstream: FaultUpstream;
  let gate: RunningToolgate;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-resilience-'));
    await writeFile(join(dir, 'policy.yaml'), POLICY);
    upstream = await startFaultUpstream();
    gate = await startToolgate(upstream.origin, [
      '--policy-file',
      join(dir, 'policy.yaml'),
      '--upstream-timeout-ms',
      '300',
      '--upstream-body-idle-ms',
      '300',
      '--client-headers-timeout-ms',
      '1000',
      '--max-connections',
      '8',
    ]);
    await gate.ready;
  });
  after(async () => {
    await gate?.close();
    await upstream?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('TOOLGATE_UPSTREAM_TIMEOUT_MS bounds tools/call of a tool whose policy sets no timeout', async () => {
    const res = await Promise.race([
      post(gate.url, call(1, 'stall_head')),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('still waiting: the process setting was ignored')), PATIENCE_MS),
      ),
    ]);
    // The setting is the call's deadline, over the whole exchange (issue 21).
    refusedCall(res, 'deadline_exceeded');
  });

  it('an upstream that sends its head and then stalls is cut at the idle bound, and its connection released', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const req = request(
        gate.url,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        },
        (res) => {
          assert.equal(res.statusCode, 200);
          res.on('data', () => {});
          res.once('end', () => resolve('ended'));
          res.once('aborted', () => resolve('aborted'));
          res.once('error', () => resolve('aborted'));
        },
      );
      req.once('error', () => resolve('aborted'));
      req.setTimeout(PATIENCE_MS, () => {
        resolve('hung');
        req.destroy();
      });
      req.end(call(2, 'stall_body'));
    });
    assert.equal(outcome, 'aborted', 'the client learns the body will not complete');
    for (let i = 0; i < 100 && upstream.abandoned() < 1; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(upstream.abandoned() >= 1, 'the upstream request was aborted, freeing its connection');
  });

  it('a client that does not finish its request head gets 408 request_timeout', async () => {
    const socket = await openSocket(gate.port);
    socket.write('POST /mcp HTTP/1.1\r\nhost: x\r\n');
    const got = await readResponse(socket);
    socket.destroy();
    assert.match(got.text, /^HTTP\/1\.1 408 /);
    assert.match(got.text, /"code":"request_timeout"/);
  });

  it('connections past TOOLGATE_MAX_CONNECTIONS are closed on arrival and counted', async () => {
    const held = await Promise.all(Array.from({ length: 8 }, () => openSocket(gate.port)));
    await new Promise((r) => setTimeout(r, 50));
    const extra = await openSocket(gate.port);
    extra.write('POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}');
    const got = await readResponse(extra);
    assert.equal(got.ended, true);
    assert.equal(got.text, '', 'closed without an answer');
    for (const s of held) s.destroy();
    const metrics = await (await fetch(`${gate.adminUrl}/metrics`)).text();
    assert.match(metrics, /^toolgate_client_connections_refused_total [1-9]/m);
  });
});

describe('shutdown', () => {
  it('a request sent on a kept-alive connection just after SIGTERM is answered with Connection: close, not reset', async () => {
    const upstream = await startFaultUpstream();
    const gate = await startToolgate(upstream.origin);
    try {
      await gate.ready;
      const socket = await openSocket(gate.port);
      const ping = (id: number) => {
        const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });
        return `POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
      };
      socket.write(ping(1));
      const first = await readResponse(socket);
      assert.match(first.text, /^HTTP\/1\.1 200 /);
      const closing = gate.close();
      socket.write(ping(2));
      const second = await readResponse(socket);
      socket.destroy();
      await closing;
      assert.equal(second.error, undefined, 'no reset');
      assert.match(second.text, /^HTTP\/1\.1 200 /);
      assert.match(second.text, /\r\nconnection: close\r\n/i);
    } finally {
      await gate.close();
      await upstream.close();
    }
  });
});
