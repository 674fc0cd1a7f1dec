import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Pool, request } from 'undici';
import { requestBuffered } from '../../../src/upstream/buffered.ts';
import { forward } from '../../../src/upstream/forward.ts';
import { listenOnLoopback, type Listening } from '../../helpers/http-server.ts';

/**
 * A caller can leave while toolgate is still deciding (a validator, a grant
 * lookup): by the time the request would go upstream its response has closed.
 * Both ways upstream must then send nothing and say client_closed.
 */
describe('upstream requests for a caller that has already left', () => {
  let upstream: Listening;
  let front: Listening;
  let upstreamRequests = 0;
  let pool: Pool;
  let arrived = (): void => {};
  let callerLeft = (_req: IncomingMessage, _res: ServerResponse): void => {};

  before(async () => {
    upstream = await listenOnLoopback((_req, res) => {
      upstreamRequests++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
    });
    front = await listenOnLoopback((req, res) => {
      res.once('close', () => callerLeft(req, res));
      arrived();
    });
    pool = new Pool(upstream.origin);
  });
  after(async () => {
    // destroy, not close: close waits for every request, and a stuck one is the failure under test.
    await pool.destroy();
    await Promise.all([front.close(), upstream.close()]);
  });

  /** Runs `send` in the front server's handler once its caller has disconnected; resolves with what it returned. */
  async function afterCallerLeft<T>(send: (req: IncomingMessage, res: ServerResponse) => Promise<T>): Promise<T> {
    const result = new Promise<T>((resolve, reject) => {
      callerLeft = (req, res) => void send(req, res).then(resolve, reject);
    });
    const reached = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const leaving = new AbortController();
    const pending = request(`${front.origin}/mcp`, { method: 'POST', body: '{}', signal: leaving.signal }).catch(
      () => 'aborted',
    );
    await reached;
    leaving.abort();
    assert.equal(await pending, 'aborted');
    return result;
  }

  it('forward() sends nothing and ends as client_closed', { timeout: 5000 }, async () => {
    const before = upstreamRequests;
    const outcome = await afterCallerLeft((req, res) =>
      forward(pool, { req, res, headers: ['content-type', 'application/json'], body: Buffer.from('{}'), rpcId: 1 }),
    );
    assert.equal(outcome, 'client_closed');
    assert.equal(upstreamRequests, before);
  });

  it('requestBuffered() sends nothing and ends as client_closed', { timeout: 5000 }, async () => {
    const before = upstreamRequests;
    const outcome = await afterCallerLeft((req, res) =>
      requestBuffered(pool, req, res, ['content-type', 'application/json'], Buffer.from('{}'), 1024),
    );
    assert.deepEqual(outcome, { ok: false, error: 'client_closed' });
    assert.equal(upstreamRequests, before);
  });
});
