import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { constants, createServer, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { serviceDefinition } from '../../src/grpc/definitions.ts';
import { ValidatorClients } from '../../src/grpc/validator-client.ts';

/**
 * toolgate's gRPC validator client against a real HTTP/2 server on loopback
 * (and on a unix socket) that answers each request the way its `validator`
 * field names: well-formed, or broken in one of the ways a validator or
 * something in front of it can break a unary call.
 */

const method = serviceDefinition('toolgate.v1.Validator').Validate;
assert.ok(method !== undefined);
const encode = (value: Record<string, unknown>): Buffer => frame(method.responseSerialize(value));

function frame(message: Buffer, compressed = 0): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out[0] = compressed;
  out.writeUInt32BE(message.length, 1);
  message.copy(out, 5);
  return out;
}

const seen: { path: string; timeout: string | undefined; validator: string; payloadBytes: number }[] = [];

function answer(stream: ServerHttp2Stream, validator: string): void {
  const ok = { ':status': 200, 'content-type': 'application/grpc' };
  switch (validator) {
    case 'valid':
      stream.respond(ok, { waitForTrailers: true });
      stream.end(encode({ valid: true }));
      break;
    case 'block':
      stream.respond(ok, { waitForTrailers: true });
      stream.end(encode({ valid: false, severity: 'SEVERITY_ERROR', code: 'secret_found', message: 'never read' }));
      break;
    case 'no_severity':
      stream.respond(ok, { waitForTrailers: true });
      stream.end(encode({ valid: false }));
      break;
    case 'http_503':
      stream.respond({ ':status': 503, 'content-type': 'text/plain' });
      stream.end('busy');
      return;
    case 'not_grpc':
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.end('{"valid":true}');
      return;
    case 'status_only':
      stream.respond({ ...ok, 'grpc-status': '7', 'grpc-message': 'denied' }, { endStream: true });
      return;
    case 'deadline':
      stream.respond({ ...ok, 'grpc-status': '4' }, { endStream: true });
      return;
    case 'garbage':
      stream.respond(ok, { waitForTrailers: true });
      stream.end(frame(Buffer.from([0xff, 0xff, 0xff])));
      break;
    case 'compressed':
      stream.respond(ok, { waitForTrailers: true });
      stream.end(frame(method!.responseSerialize({ valid: true }), 1));
      break;
    case 'two_messages':
      stream.respond(ok, { waitForTrailers: true });
      stream.end(Buffer.concat([encode({ valid: true }), encode({ valid: true })]));
      break;
    case 'large':
      // Under the 64 KiB bound: a well-formed answer that fills DATA frames.
      stream.respond(ok, { waitForTrailers: true });
      stream.end(encode({ valid: true, message: 'x'.repeat(60 * 1024) }));
      break;
    case 'oversized':
      stream.respond(ok, { waitForTrailers: true });
      stream.end(encode({ valid: true, message: 'x'.repeat(70 * 1024) }));
      break;
    case 'silent':
      return;
    case 'later':
      setTimeout(() => answer(stream, 'valid'), 20);
      return;
    case 'refused':
      stream.close(constants.NGHTTP2_REFUSED_STREAM);
      return;
    case 'goaway_after': {
      const session = stream.session;
      stream.respond(ok, { waitForTrailers: true });
      stream.end(encode({ valid: true }));
      stream.on('close', () => session?.goaway(constants.NGHTTP2_NO_ERROR));
      break;
    }

    default:
      throw new Error(`no case ${validator}`);
  }
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
}

let sessions = 0;
let open = 0;
let mostOpen = 0;

function validatorServer(settings: { maxConcurrentStreams?: number } = {}): Http2Server {
  const server = createServer({ settings });
  server.on('session', () => sessions++);
  server.on('stream', (stream, headers) => {
    mostOpen = Math.max(mostOpen, ++open);
    stream.on('close', () => open--);
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const body = Buffer.concat(chunks);
      const request = method!.requestDeserialize(body.subarray(5)) as { validator: string };
      seen.push({
        path: String(headers[':path']),
        timeout: headers['grpc-timeout'] as string | undefined,
        validator: request.validator,
        payloadBytes: Buffer.byteLength((request as { payloadJson?: string }).payloadJson ?? ''),
      });
      answer(stream, request.validator);
    });
    stream.on('error', () => undefined);
  });
  return server;
}

const request = (validator: string) => ({
  event: 'tools/call',
  phase: 'request',
  payloadJson: '{"name":"t"}',
  validator,
});

describe('the gRPC validator client', () => {
  const server = validatorServer();
  const unixServer = validatorServer();
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-validator-'));
  const socket = join(dir, 'validator.sock');
  let target = '';
  const clients = new ValidatorClients();

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => unixServer.listen(socket, resolve));
    target = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    clients.close();
    await new Promise((resolve) => server.close(resolve));
    await new Promise((resolve) => unixServer.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends one gRPC unary call with its deadline, and reads valid and invalid answers', async () => {
    assert.deepEqual(await clients.validate(target, request('valid'), 1500), { kind: 'valid' });
    assert.deepEqual(await clients.validate(target, request('block'), 1500), {
      kind: 'invalid',
      severity: 'error',
      code: 'secret_found',
    });
    const call = seen.find((s) => s.validator === 'valid');
    assert.equal(call?.path, '/toolgate.v1.Validator/Validate');
    assert.equal(call?.timeout, '1500m');
  });

  it('reads every broken answer as a failure, never as a verdict', async () => {
    const cases: [string, string][] = [
      ['no_severity', 'malformed'],
      ['garbage', 'malformed'],
      ['compressed', 'malformed'],
      ['two_messages', 'malformed'],
      ['oversized', 'malformed'],
      ['http_503', 'unavailable'],
      ['not_grpc', 'unavailable'],
      ['status_only', 'unavailable'],
      ['deadline', 'timeout'],
    ];
    for (const [validator, reason] of cases) {
      assert.deepEqual(await clients.validate(target, request(validator), 1500), { kind: 'failed', reason }, validator);
    }
  });

  it('gives up at the deadline on a validator that never answers, and the session serves the next call', async () => {
    assert.deepEqual(await clients.validate(target, request('silent'), 150), { kind: 'failed', reason: 'timeout' });
    assert.deepEqual(await clients.validate(target, request('valid'), 1500), { kind: 'valid' });
  });

  it("sends a request larger than the peer's flow-control windows and frames, whole", async () => {
    // node:http2 servers open with 64 KiB windows and 16 KiB frames: 300 KB needs both respected.
    const big = {
      ...request('valid'),
      payloadJson: JSON.stringify({ name: 't', arguments: { blob: 'x'.repeat(300_000) } }),
    };
    assert.deepEqual(await clients.validate(target, big, 5000), { kind: 'valid' });
    assert.equal(seen.at(-1)?.payloadBytes, Buffer.byteLength(big.payloadJson));
    const calls = await Promise.all([1, 2, 3].map(() => clients.validate(target, big, 5000)));
    assert.deepEqual(
      calls,
      [1, 2, 3].map(() => ({ kind: 'valid' })),
    );
  });

  it('keeps reading answers past its first connection window, topping it up as it reads', async () => {
    // The connection's receive window is 1 MiB: 24 answers of 60 KiB need it replenished.
    for (let i = 0; i < 24; i++)
      assert.deepEqual(await clients.validate(target, request('large'), 1500), { kind: 'valid' });
  });

  it("keeps to the peer's stream limit, queueing calls beyond it", async () => {
    const narrow = validatorServer({ maxConcurrentStreams: 2 });
    await new Promise<void>((resolve) => narrow.listen(0, '127.0.0.1', resolve));
    const narrowTarget = `127.0.0.1:${(narrow.address() as AddressInfo).port}`;
    const own = new ValidatorClients();
    try {
      // The first call learns the limit from the server's SETTINGS.
      assert.deepEqual(await own.validate(narrowTarget, request('valid'), 1500), { kind: 'valid' });
      mostOpen = 0;
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, () => own.validate(narrowTarget, request('later'), 3000)),
      );
      assert.deepEqual(
        outcomes,
        Array.from({ length: 8 }, () => ({ kind: 'valid' })),
      );
      assert.equal(mostOpen, 2);
    } finally {
      own.close();
      await new Promise((resolve) => narrow.close(resolve));
    }
  });

  it('reads a reset stream as unavailable, and the connection serves the next call', async () => {
    const before = sessions;
    assert.deepEqual(await clients.validate(target, request('valid'), 1500), { kind: 'valid' });
    assert.deepEqual(await clients.validate(target, request('refused'), 1500), {
      kind: 'failed',
      reason: 'unavailable',
    });
    assert.deepEqual(await clients.validate(target, request('valid'), 1500), { kind: 'valid' });
    assert.equal(sessions, before);
  });

  it('after GOAWAY finishes the call in flight and dials a new connection for the next', async () => {
    const before = sessions;
    assert.deepEqual(await clients.validate(target, request('goaway_after'), 1500), { kind: 'valid' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(await clients.validate(target, request('valid'), 1500), { kind: 'valid' });
    assert.equal(sessions, before + 1);
  });

  it('reaches a validator on a unix socket, in both spellings', async () => {
    assert.deepEqual(await clients.validate(`unix:${socket}`, request('valid'), 1500), { kind: 'valid' });
    assert.deepEqual(await clients.validate(`unix://${socket}`, request('valid'), 1500), { kind: 'valid' });
    assert.deepEqual(await clients.validate(`dns:///${target}`, request('valid'), 1500), { kind: 'valid' });
  });

  it('answers unavailable while nothing listens, and reaches the validator again once it is back', async () => {
    const late = createServer();
    await new Promise<void>((resolve) => late.listen(0, '127.0.0.1', resolve));
    const port = (late.address() as AddressInfo).port;
    await new Promise((resolve) => late.close(resolve));
    const gone = `127.0.0.1:${port}`;
    assert.deepEqual(await clients.validate(gone, request('valid'), 1500), { kind: 'failed', reason: 'unavailable' });
    const back = validatorServer();
    await new Promise<void>((resolve) => back.listen(port, '127.0.0.1', resolve));
    try {
      // The dial backoff is at most a second: the restarted validator is asked again well within a few.
      const began = Date.now();
      let outcome = await clients.validate(gone, request('valid'), 1500);
      while (outcome.kind !== 'valid' && Date.now() - began < 5000) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        outcome = await clients.validate(gone, request('valid'), 1500);
      }
      assert.deepEqual(outcome, { kind: 'valid' });
    } finally {
      await new Promise((resolve) => back.close(resolve));
    }
  });
});
