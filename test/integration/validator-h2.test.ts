import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { serviceDefinition } from '../../src/grpc/definitions.ts';
import { ValidatorClients } from '../../src/grpc/validator-client.ts';

/**
 * The validator client's HTTP/2 against a peer on loopback that writes its
 * frames by hand: the legal shapes node:http2 never sends (padding,
 * CONTINUATION, GOAWAY and REFUSED_STREAM for a call it did not process,
 * which the client asks once more) and the protocol errors a broken or
 * hostile validator can make. A protocol error ends the
 * connection with a GOAWAY naming the error, the call fails `unavailable`,
 * and the next call dials a new connection.
 */

const method = serviceDefinition('toolgate.v1.Validator').Validate;
assert.ok(method !== undefined);

const DATA = 0;
const HEADERS = 1;
const RST_STREAM = 3;
const SETTINGS = 4;
const PUSH_PROMISE = 5;
const GOAWAY = 7;
const CONTINUATION = 9;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const REFUSED_STREAM = 0x7;
const CANCEL = 0x8;

const errorCode = (value: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value);
  return b;
};

function frame(type: number, flags: number, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(id, 5);
  return Buffer.concat([header, payload]);
}

const str = (s: string): Buffer => Buffer.concat([Buffer.from([s.length]), Buffer.from(s, 'latin1')]);
/** `:status: 200` (static index 8) and `content-type: application/grpc` (literal, indexed name 31). */
const RESPONSE_HEADERS = Buffer.concat([Buffer.from([0x88, 0x0f, 0x10]), str('application/grpc')]);
/** `grpc-status: 0`, a literal with a new name. */
const TRAILERS = Buffer.concat([Buffer.from([0x00]), str('grpc-status'), str('0')]);
const message = method.responseSerialize({ valid: true });
const VALID_BODY = Buffer.concat([Buffer.from([0, 0, 0, 0, message.length]), message]);

type Script = (stream: number, socket: Socket) => void;

/** A well-formed answer, `valid: true`: headers, one message, trailers. */
const answerValid: Script = (id, socket) =>
  socket.write(
    Buffer.concat([
      frame(HEADERS, END_HEADERS, id, RESPONSE_HEADERS),
      frame(DATA, 0, id, VALID_BODY),
      frame(HEADERS, END_HEADERS | END_STREAM, id, TRAILERS),
    ]),
  );

/** A peer that sends its SETTINGS, then runs `script` for each request's stream; it records the GOAWAY codes it receives. */
class RawPeer {
  readonly server: Server;
  readonly goawayCodes: number[] = [];
  connections = 0;
  script: Script = () => undefined;

  constructor() {
    this.server = createServer((socket) => {
      this.connections++;
      socket.on('error', () => undefined);
      let input = Buffer.alloc(0);
      let prefaceRead = false;
      socket.write(frame(SETTINGS, 0, 0));
      socket.on('data', (chunk: Buffer) => {
        input = Buffer.concat([input, chunk]);
        if (!prefaceRead) {
          if (input.length < 24) return;
          input = input.subarray(24);
          prefaceRead = true;
        }
        while (input.length >= 9) {
          const length = input.readUIntBE(0, 3);
          if (input.length < 9 + length) break;
          const type = input[3] as number;
          const flags = input[4] as number;
          const id = input.readUInt32BE(5) & 0x7fffffff;
          const payload = input.subarray(9, 9 + length);
          input = input.subarray(9 + length);
          if (type === GOAWAY) this.goawayCodes.push(payload.readUInt32BE(4));
          if (type === DATA && (flags & END_STREAM) !== 0) this.script(id, socket);
        }
      });
    });
  }

  get target(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
}

const request = { event: 'tools/call', phase: 'request', payloadJson: '{"name":"t"}', validator: 'raw' };

describe('the validator client against hand-written HTTP/2', () => {
  const peer = new RawPeer();
  const clients = new ValidatorClients();
  const call = (timeoutMs = 1500) => clients.validate(peer.target, request, timeoutMs);

  before(async () => {
    await new Promise<void>((resolve) => peer.server.listen(0, '127.0.0.1', resolve));
  });

  after(async () => {
    clients.close();
    await new Promise((resolve) => peer.server.close(resolve));
  });

  it('reads padded frames and a header block split over CONTINUATION', async () => {
    peer.script = (id, socket) => {
      const padded = (payload: Buffer, padding: number) =>
        Buffer.concat([Buffer.from([padding]), payload, Buffer.alloc(padding)]);
      socket.write(
        Buffer.concat([
          frame(HEADERS, PADDED, id, padded(RESPONSE_HEADERS.subarray(0, 5), 7)),
          frame(CONTINUATION, END_HEADERS, id, RESPONSE_HEADERS.subarray(5)),
          frame(DATA, PADDED, id, padded(VALID_BODY, 3)),
          frame(HEADERS, END_HEADERS | END_STREAM, id, TRAILERS),
        ]),
      );
    };
    assert.deepEqual(await call(), { kind: 'valid' });
  });

  it('asks again, once, on a new connection, when the peer says in its GOAWAY it did not process a call', async () => {
    let goaways = 1;
    peer.script = (id, socket) =>
      goaways-- > 0 ? socket.write(frame(GOAWAY, 0, 0, Buffer.alloc(8))) : answerValid(id, socket);
    const before = peer.connections;
    assert.deepEqual(await call(), { kind: 'valid' });
    assert.equal(peer.connections, before + 1);
    // Turned away on this connection and again on the next: no third try.
    peer.script = (_id, socket) => socket.write(frame(GOAWAY, 0, 0, Buffer.alloc(8)));
    assert.deepEqual(await call(), { kind: 'failed', reason: 'unavailable' });
    assert.equal(peer.connections, before + 2);
  });

  it('asks again after REFUSED_STREAM on the same connection, and not after a reset that may follow work', async () => {
    peer.script = answerValid;
    assert.deepEqual(await call(), { kind: 'valid' });
    const before = peer.connections;
    let refusals = 1;
    peer.script = (id, socket) =>
      refusals-- > 0 ? socket.write(frame(RST_STREAM, 0, id, errorCode(REFUSED_STREAM))) : answerValid(id, socket);
    assert.deepEqual(await call(), { kind: 'valid' });
    peer.script = (id, socket) => socket.write(frame(RST_STREAM, 0, id, errorCode(CANCEL)));
    assert.deepEqual(await call(), { kind: 'failed', reason: 'unavailable' });
    assert.equal(peer.connections, before);
  });

  it('ends the connection on each protocol error with the GOAWAY code that names it', async () => {
    const cases: [string, Script, number][] = [
      // A reference to the dynamic table this client said is 0 bytes.
      ['dynamic table index', (id, s) => s.write(frame(HEADERS, END_HEADERS | END_STREAM, id, Buffer.from([0xbe]))), 9],
      // A Huffman string whose padding is not EOS's leading ones.
      [
        'bad Huffman padding',
        (id, s) => s.write(frame(HEADERS, END_HEADERS, id, Buffer.from([0x00, 0x81, 0x00, 0x81, 0x00]))),
        9,
      ],
      // A frame longer than the 16 KiB this client accepts.
      ['oversized frame', (id, s) => s.write(frame(DATA, 0, id, Buffer.alloc(16_385))), 6],
      // Push is disabled in the client's SETTINGS.
      ['PUSH_PROMISE', (id, s) => s.write(frame(PUSH_PROMISE, END_HEADERS, id, Buffer.alloc(4))), 1],
      // DATA on a stream the client never opened.
      ['DATA on an idle stream', (id, s) => s.write(frame(DATA, 0, id + 2, VALID_BODY)), 1],
      // A header block interrupted by another frame.
      [
        'interrupted header block',
        (id, s) => s.write(Buffer.concat([frame(HEADERS, 0, id, RESPONSE_HEADERS), frame(DATA, 0, id, VALID_BODY)])),
        1,
      ],
      // Padding longer than the frame.
      [
        'padding past the frame',
        (id, s) =>
          s.write(
            Buffer.concat([
              frame(HEADERS, END_HEADERS, id, RESPONSE_HEADERS),
              frame(DATA, PADDED, id, Buffer.from([9, 1, 2])),
            ]),
          ),
        1,
      ],
    ];
    for (const [name, script, code] of cases) {
      const before = peer.connections;
      peer.goawayCodes.length = 0;
      peer.script = script;
      assert.deepEqual(await call(), { kind: 'failed', reason: 'unavailable' }, name);
      // The GOAWAY was written before the socket was closed; give the peer a moment to read it.
      for (let i = 0; i < 50 && peer.goawayCodes.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
      assert.deepEqual(peer.goawayCodes, [code], name);
      peer.script = answerValid;
      assert.deepEqual(await call(), { kind: 'valid' }, `${name}: the next call`);
      assert.equal(peer.connections, before + 1, name);
    }
  });

  it('fails a call whose connection closes under it, and gives up on a peer that never answers', async () => {
    peer.script = (_id, socket) => socket.destroy();
    assert.deepEqual(await call(), { kind: 'failed', reason: 'unavailable' });
    peer.script = () => undefined;
    assert.deepEqual(await call(100), { kind: 'failed', reason: 'timeout' });
  });
});
