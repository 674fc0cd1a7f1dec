import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ValidatorClients } from '../../src/grpc/validator-client.ts';
import { peerSkip, startPeer, type Peer, type PeerValidator } from '../helpers/grpc-peer.ts';

/**
 * The validator client against validators on other gRPC stacks
 * (test/grpc-peers): grpc-go and grpcio (gRPC C-core, what Python, Ruby and
 * PHP validators run on). Each has its own HTTP/2 and HPACK encoder, its own
 * flow-control windows and stream limit; every answer the client reads from
 * node:http2 it reads from them alike.
 */

const request = (validator: string, payloadJson = '{"name":"t"}') => ({
  event: 'tools/call',
  phase: 'request',
  payloadJson,
  validator,
});

for (const peer of ['grpc-go', 'grpcio'] as const satisfies readonly Peer[]) {
  describe(`the gRPC validator client against ${peer}`, { skip: peerSkip(peer) }, () => {
    let open: PeerValidator;
    let narrow: PeerValidator;
    const clients = new ValidatorClients();

    before(async () => {
      open = await startPeer(peer);
      narrow = await startPeer(peer, 2);
    });

    after(async () => {
      clients.close();
      await Promise.all([open.close(), narrow.close()]);
    });

    it('reads valid and invalid answers and gRPC error statuses', async () => {
      assert.deepEqual(await clients.validate(open.target, request('valid'), 2000), { kind: 'valid' });
      assert.deepEqual(await clients.validate(open.target, request('block'), 2000), {
        kind: 'invalid',
        severity: 'error',
        code: 'secret_found',
      });
      assert.deepEqual(await clients.validate(open.target, request('denied'), 2000), {
        kind: 'failed',
        reason: 'unavailable',
      });
      assert.deepEqual(await clients.validate(open.target, request('deadline'), 2000), {
        kind: 'failed',
        reason: 'timeout',
      });
      assert.deepEqual(await clients.validate(open.target, request('valid'), 2000), { kind: 'valid' });
    });

    it("sends a request larger than the server's windows whole", async () => {
      const payload = JSON.stringify({ name: 't', arguments: { blob: 'y'.repeat(1_000_000) } });
      assert.deepEqual(await clients.validate(open.target, request('size', payload), 5000), {
        kind: 'invalid',
        severity: 'info',
        code: `size_${Buffer.byteLength(payload)}`,
      });
    });

    it("keeps to the server's stream limit with many calls at once", async () => {
      assert.deepEqual(await clients.validate(narrow.target, request('valid'), 2000), { kind: 'valid' });
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, () => clients.validate(narrow.target, request('later'), 3000)),
      );
      assert.deepEqual(
        outcomes,
        Array.from({ length: 10 }, () => ({ kind: 'valid' })),
      );
    });
  });
}
