import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { listenOnLoopback } from '../helpers/http-server.ts';
import { freePort } from '../helpers/ports.ts';
import { waitFor } from '../helpers/wait.ts';

const CLI = join(import.meta.dirname, '../../src/cli.ts');

describe('graceful shutdown of the toolgate process', () => {
  it('on SIGTERM stops accepting, lets an open SSE stream finish, and exits 0', async () => {
    const upstream = await listenOnLoopback((req, res) => {
      if (req.method === 'OPTIONS') {
        res.writeHead(204).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let n = 0;
      const timer = setInterval(() => {
        n++;
        res.write(`id: ${n}\ndata: {"n":${n}}\n\n`);
        if (n === 8) {
          clearInterval(timer);
          res.end();
        }
      }, 100);
    });
    const [port, adminPort] = [await freePort(), await freePort()];
    const child = spawn(
      process.execPath,
      [
        CLI,
        '--upstream',
        upstream.origin,
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--admin-port',
        String(adminPort),
        '--drain-timeout-ms',
        '10000',
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const exited = once(child, 'exit');
    try {
      for (let i = 0; i < 100; i++) {
        const ready = await fetch(`http://127.0.0.1:${adminPort}/readyz`).then(
          (r) => r.status === 200,
          () => false,
        );
        if (ready) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stream"}}',
      });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const first = await reader.read();
      assert.match(Buffer.from(first.value ?? []).toString(), /id: 1/);

      child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 150));
      await assert.rejects(
        fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', body: '{}' }),
        'new connections are refused while draining',
      );

      let text = Buffer.from(first.value ?? []).toString();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += Buffer.from(value).toString();
      }
      assert.match(text, /id: 8\ndata: \{"n":8\}/, 'the stream ran to its natural end');
      const [code] = await exited;
      assert.equal(code, 0);
    } finally {
      child.kill('SIGKILL');
      await upstream.close();
    }
  });

  it('answers a request that arrives while draining on a busy keep-alive connection, with Connection: close, and still exits 0', async () => {
    let release = (): void => {};
    const reached = Promise.withResolvers<void>();
    const upstream = await listenOnLoopback((req, res) => {
      if (req.method === 'OPTIONS') {
        res.writeHead(204).end();
        return;
      }
      req.resume();
      release = () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
      reached.resolve();
    });
    const [port, adminPort] = [await freePort(), await freePort()];
    const child = spawn(
      process.execPath,
      [
        CLI,
        '--upstream',
        upstream.origin,
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--admin-port',
        String(adminPort),
        '--drain-timeout-ms',
        '10000',
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const exited = once(child, 'exit');
    let socket: Socket | undefined;
    try {
      await waitFor(
        () =>
          fetch(`http://127.0.0.1:${adminPort}/readyz`).then(
            (r) => r.status === 200,
            () => false,
          ),
        'toolgate to be ready',
      );
      socket = connect(port, '127.0.0.1');
      const received: Buffer[] = [];
      socket.on('data', (d: Buffer) => received.push(d));
      socket.on('error', () => {});
      const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
      socket.write(
        `POST /mcp HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\naccept: application/json\r\ncontent-length: ${ping.length}\r\n\r\n${ping}`,
      );
      await reached.promise;
      child.kill('SIGTERM');
      await waitFor(
        () =>
          fetch(`http://127.0.0.1:${adminPort}/readyz`).then(
            (r) => r.status === 503,
            () => true,
          ),
        'toolgate to start draining',
      );
      // Refused on the spot, before any drain hook could run after the handler.
      socket.write('PUT /mcp HTTP/1.1\r\nhost: t\r\ncontent-length: 0\r\n\r\n');
      await new Promise((r) => setTimeout(r, 100));
      release();
      const [code] = await exited;
      assert.equal(code, 0);
      const text = Buffer.concat(received).toString();
      assert.match(text, /^HTTP\/1\.1 200 [\s\S]*HTTP\/1\.1 405 /);
      assert.match(text.slice(text.indexOf('HTTP/1.1 405')), /\r\nconnection: close\r\n/i);
    } finally {
      socket?.destroy();
      child.kill('SIGKILL');
      await upstream.close();
    }
  });

  it('exits 2 with one line naming an invalid setting', async () => {
    const child = spawn(process.execPath, [CLI, '--port', 'eighty'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const [code] = await once(child, 'exit');
    assert.equal(code, 2);
    assert.equal(stderr, 'toolgate: invalid setting --port: expected a whole number from 0 to 65535\n');
  });
});
