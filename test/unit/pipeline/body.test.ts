import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { readBody, type BodyResult } from '../../../src/pipeline/stages/body.ts';
import { listenOnLoopback, type Listening } from '../../helpers/http-server.ts';

const LIMIT = 64;

/**
 * readBody against real sockets: each case writes raw request bytes, and the
 * server reads the body either at once or, like toolgate after an awaited
 * authentication, only once the request's 'close' has fired.
 */
describe('readBody', () => {
  let server: Listening;
  let port = 0;
  let handle = (_req: IncomingMessage, _res: ServerResponse): void => {};

  before(async () => {
    server = await listenOnLoopback((req, res) => handle(req, res));
    port = Number(new URL(server.origin).port);
  });
  after(() => server.close());

  function read(head: string, body: string, opts: { leave?: boolean; afterClose?: boolean } = {}): Promise<BodyResult> {
    return new Promise((resolve) => {
      handle = (req, res) => {
        if (opts.afterClose) req.once('close', () => void readBody(req, res, LIMIT).then(resolve));
        else void readBody(req, res, LIMIT).then(resolve);
      };
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`POST /mcp HTTP/1.1\r\nHost: t\r\n${head}\r\n${body}`);
        if (opts.leave) setTimeout(() => socket.destroy(), 20);
      });
      socket.on('error', () => {});
    });
  }

  it('returns the whole body', async () => {
    assert.deepEqual(await read('Content-Length: 7\r\n', '{"a":1}'), { ok: true, body: Buffer.from('{"a":1}') });
    const chunked = await read('Transfer-Encoding: chunked\r\n', '3\r\n{"a\r\n4\r\n":1}\r\n0\r\n\r\n');
    assert.deepEqual(chunked, { ok: true, body: Buffer.from('{"a":1}') });
  });

  it('takes a body that has all arrived at once, and waits for one still on its way', async () => {
    let listening = -1;
    const whole = await new Promise<BodyResult>((resolve) => {
      handle = (req, res) =>
        void readBody(req, res, LIMIT).then((r) => {
          listening = req.listenerCount('data') + req.listenerCount('end');
          resolve(r);
          res.end();
        });
      const socket = connect(port, '127.0.0.1', () =>
        socket.write('POST /mcp HTTP/1.1\r\nHost: t\r\nContent-Length: 7\r\n\r\n{"a":1}'),
      );
      socket.on('data', () => socket.destroy());
    });
    assert.deepEqual(whole, { ok: true, body: Buffer.from('{"a":1}') });
    assert.equal(listening, 0, 'read from the buffer, no listener');
    assert.deepEqual(await read('Content-Length: 0\r\n', ''), { ok: true, body: Buffer.alloc(0) });

    const split = await new Promise<BodyResult>((resolve) => {
      handle = (req, res) => void readBody(req, res, LIMIT).then(resolve);
      const socket = connect(port, '127.0.0.1', () => {
        socket.write('POST /mcp HTTP/1.1\r\nHost: t\r\nContent-Length: 14\r\n\r\n{"a":');
        setTimeout(() => socket.write('"second"}'), 30);
      });
      socket.on('error', () => {});
    });
    assert.deepEqual(split, { ok: true, body: Buffer.from('{"a":"second"}') });
  });

  it('reads each request of a kept-alive connection whole, and tells a waiting client to continue', async () => {
    const bodies: string[] = [];
    await new Promise<void>((resolve) => {
      handle = (req, res) =>
        void readBody(req, res, LIMIT).then((r) => {
          bodies.push(r.ok ? r.body.toString() : r.code);
          res.end('ok');
        });
      const socket = connect(port, '127.0.0.1', () => {
        socket.write('POST /mcp HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\none');
        socket.write('POST /mcp HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\ntwo');
        socket.write('POST /mcp HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n');
      });
      let seen = '';
      socket.on('data', (d) => {
        seen += d.toString();
        if (seen.includes('100 Continue') && !seen.includes('three')) {
          seen += 'three';
          socket.write('three');
        }
        if (seen.split('\r\n\r\nok').length === 4) {
          socket.destroy();
          resolve();
        }
      });
    });
    assert.deepEqual(bodies, ['one', 'two', 'three']);
  });

  it('refuses a declared length over the limit before reading, and a streamed body once it crosses it', async () => {
    assert.deepEqual(await read(`Content-Length: ${LIMIT + 1}\r\n`, ''), { ok: false, code: 'payload_too_large' });
    const big = 'x'.repeat(LIMIT + 1);
    assert.deepEqual(
      await read('Transfer-Encoding: chunked\r\n', `${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`),
      { ok: false, code: 'payload_too_large' },
    );
  });

  it('says aborted when the client leaves mid-body', async () => {
    assert.deepEqual(await read('Content-Length: 20\r\n', '{"a":', { leave: true }), { ok: false, code: 'aborted' });
  });

  it(
    'says aborted, rather than waiting for ever, when the client left before reading began',
    { timeout: 5000 },
    async () => {
      assert.deepEqual(await read('Content-Length: 20\r\n', '{"a":', { leave: true, afterClose: true }), {
        ok: false,
        code: 'aborted',
      });
      assert.deepEqual(await read('Content-Length: 7\r\n', '{"a":1}', { leave: true, afterClose: true }), {
        ok: false,
        code: 'aborted',
      });
    },
  );
});
