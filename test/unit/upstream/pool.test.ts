import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { UpstreamPool } from '../../../src/upstream/pool.ts';
import { listenOnLoopback } from '../../helpers/http-server.ts';

/**
 * pool.ts loads undici's Pool module and the request API without the package
 * index. The pool must work before anything loads the index (this file
 * imports it only afterwards), and must be the index's own Pool with the
 * same API, so an undici upgrade that moves either file fails here.
 */
describe('the upstream pool without the undici index', () => {
  it("requests and streams before the index is loaded, and is the index's Pool", async () => {
    const upstream = await listenOnLoopback((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('pong');
    });
    const pool = new UpstreamPool(new URL(upstream.origin), {}, 0);
    try {
      const res = await pool.request({ path: '/', method: 'GET' });
      assert.equal(await res.body.text(), 'pong');
      const chunks: Buffer[] = [];
      await pool.stream(
        { path: '/', method: 'GET' },
        () =>
          new Writable({
            write(chunk: Buffer, _enc, done) {
              chunks.push(chunk);
              done();
            },
          }),
      );
      assert.equal(Buffer.concat(chunks).toString(), 'pong');
    } finally {
      await pool.close();
      await upstream.close();
    }
    const undici = await import('undici');
    assert.equal(Object.getPrototypeOf(UpstreamPool), undici.Pool);
    for (const method of ['request', 'stream', 'pipeline', 'connect', 'upgrade'] as const) {
      assert.equal(UpstreamPool.prototype[method], undici.Pool.prototype[method], method);
    }
  });
});
