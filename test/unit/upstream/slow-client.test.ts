import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Pool } from 'undici';
import { forward, type ForwardOutcome } from '../../../src/upstream/forward.ts';
import { listenOnLoopback, type Listening } from '../../helpers/http-server.ts';

/** Far more than the sockets between the three parties buffer: the client's reading pace must rule. */
const ANSWER_BYTES = 24 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'x');

/**
 * A client that reads slower than the upstream writes: the upstream is paused
 * while the client's socket is full and resumed once it drains, so the whole
 * answer arrives, in order, without toolgate holding it.
 */
describe('forwarding to a client that reads slowly', () => {
  let upstream: Listening;
  let front: Listening;
  let pool: Pool;
  let outcome: Promise<ForwardOutcome> | undefined;

  before(async () => {
    upstream = await listenOnLoopback((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(ANSWER_BYTES) });
      let sent = 0;
      const more = (): void => {
        while (sent < ANSWER_BYTES) {
          sent += CHUNK.length;
          if (!res.write(CHUNK)) return void res.once('drain', more);
        }
        res.end();
      };
      more();
    });
    front = await listenOnLoopback((req, res) => {
      outcome = forward(pool, { req, res, headers: [], body: Buffer.alloc(0), rpcId: 1 });
    });
    pool = new Pool(upstream.origin);
  });
  after(async () => {
    await pool.destroy();
    await Promise.all([front.close(), upstream.close()]);
  });

  it(
    'pauses the upstream while the client lags, resumes on drain, and delivers every byte',
    { timeout: 20_000 },
    async () => {
      const socket: Socket = connect(Number(new URL(front.origin).port), '127.0.0.1');
      socket.write(`POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
      socket.pause();
      // Let every buffer on the way fill while nothing is read.
      await new Promise((r) => setTimeout(r, 300));
      const hash = createHash('sha256');
      let head: Buffer | undefined = Buffer.alloc(0);
      let bodyBytes = 0;
      for await (const chunk of socket as AsyncIterable<Buffer>) {
        let body = chunk;
        if (head !== undefined) {
          head = Buffer.concat([head, chunk]);
          const end = head.indexOf('\r\n\r\n');
          if (end === -1) continue;
          assert.match(head.subarray(0, end).toString('latin1'), /^HTTP\/1\.1 200 /);
          body = head.subarray(end + 4);
          head = undefined;
        }
        bodyBytes += body.length;
        hash.update(body);
        // A slow reader: it yields to the event loop after every chunk.
        await new Promise((r) => setImmediate(r));
      }
      assert.equal(bodyBytes, ANSWER_BYTES);
      const expected = createHash('sha256');
      for (let n = 0; n < ANSWER_BYTES; n += CHUNK.length) expected.update(CHUNK);
      assert.equal(hash.digest('hex'), expected.digest('hex'));
      assert.equal(await outcome, 'forwarded');
    },
  );
});
