import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ValidatorClients } from '../../src/grpc/validator-client.ts';
import { goValidatorSkip, startGoValidator, type GoValidator } from '../helpers/grpc-peer.ts';

/**
 * The validator client against a grpc-go server (test/grpc-peer): another
 * HTTP/2 stack and HPACK encoder than node:http2's, with its own flow-control
 * windows and stream limit. Every answer the client reads from node:http2 it
 * reads from grpc-go alike.
 */

const request = (validator: string, payloadJson = '{"name":"t"}') => ({
  event: 'tools/call',
  phase: 'request',
  payloadJson,
  validator,
});

describe('the gRPC validator client against grpc-go', { skip: goValidatorSkip() }, () => {
  let go: GoValidator;
  let narrow: GoValidator;
  const clients = new ValidatorClients();

  before(async () => {
    go = await startGoValidator();
    narrow = await startGoValidator(['-max-streams', '2']);
  });

  after(async () => {
    clients.close();
    await Promise.all([go.close(), narrow.close()]);
  });

  it('reads valid and invalid answers and gRPC error statuses', async () => {
    assert.deepEqual(await clients.validate(go.target, request('valid'), 2000), { kind: 'valid' });
    assert.deepEqual(await clients.validate(go.target, request('block'), 2000), {
      kind: 'invalid',
      severity: 'error',
      code: 'secret_found',
    });
    assert.deepEqual(await clients.validate(go.target, request('denied'), 2000), {
      kind: 'failed',
      reason: 'unavailable',
    });
    // grpc-go answers its own DEADLINE_EXCEEDED from the grpc-timeout header.
    assert.deepEqual(await clients.validate(go.target, request('deadline'), 100), {
      kind: 'failed',
      reason: 'timeout',
    });
    assert.deepEqual(await clients.validate(go.target, request('valid'), 2000), { kind: 'valid' });
  });

  it("sends a request larger than grpc-go's windows whole", async () => {
    const payload = JSON.stringify({ name: 't', arguments: { blob: 'y'.repeat(1_000_000) } });
    assert.deepEqual(await clients.validate(go.target, request('size', payload), 5000), {
      kind: 'invalid',
      severity: 'info',
      code: `size_${Buffer.byteLength(payload)}`,
    });
  });

  it("keeps to grpc-go's stream limit with many calls at once", async () => {
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
