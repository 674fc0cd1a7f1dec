/**
 * gRPC unary calls over one HTTP/2 connection (RFC 9113), for the external
 * validators' hot path. A node:http2 client stream costs about 120 µs of
 * CPU per call made one at a time (a Duplex per call, header objects, an
 * async resource), and its objects outlive young-generation collections;
 * here a call is one write of two frames and a few frames read in place
 * (`npm run bench:validator` measures both).
 *
 * It does what a unary client needs and refuses the rest: plaintext HTTP/2
 * with prior knowledge over TCP or a unix socket, as validator targets are;
 * no server push (SETTINGS_ENABLE_PUSH 0), no dynamic HPACK table
 * (SETTINGS_HEADER_TABLE_SIZE 0), frames up to the default 16 KiB. Flow
 * control is honoured both ways: a request larger than the peer's windows
 * waits for its WINDOW_UPDATEs, and the connection's receive window is
 * topped up as answers are read. Anything the peer does wrong ends the
 * connection (GOAWAY, then close) and every call on it fails `unavailable`,
 * which the validator's failure policy then decides.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { BoundedMemo } from '../../bounded/memo.ts';
import { CompressionError, decodeHeaderBlock, indexedField, literalField } from './hpack.ts';

export type UnaryOutcome =
  | {
      readonly kind: 'answer';
      /** `:status`, `content-type` and `grpc-status` (from the trailers, or from the headers of a trailers-only answer). */
      readonly httpStatus: string | undefined;
      readonly contentType: string | undefined;
      readonly grpcStatus: string | undefined;
      readonly body: Buffer;
    }
  /**
   * `unprocessed`: the peer never had the call or says it did not act on it (REFUSED_STREAM, a stream
   * above its GOAWAY's last, or still waiting for a stream when the connection ended), so it is safe to
   * send again; `unavailable`: it may have.
   */
  | { readonly kind: 'timeout' | 'unavailable' | 'too_large' | 'unprocessed' };

export interface ConnectionEvents {
  /** The transport connected. */
  connected(): void;
  /** The connection takes no new calls any more (closed, failed, or told to go away); `connected` says whether it ever connected. */
  gone(connected: boolean): void;
}

export type Address = { readonly path: string } | { readonly host: string; readonly port: number };

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const FRAME_HEADER = 9;

const DATA = 0x0;
const HEADERS = 0x1;
const PRIORITY = 0x2;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const PUSH_PROMISE = 0x5;
const PING = 0x6;
const GOAWAY = 0x7;
const WINDOW_UPDATE = 0x8;
const CONTINUATION = 0x9;

const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const PRIORITY_FLAG = 0x20;

const NO_ERROR = 0x0;
const PROTOCOL_ERROR = 0x1;
const FLOW_CONTROL_ERROR = 0x3;
const REFUSED_STREAM = 0x7;
const FRAME_SIZE_ERROR = 0x6;
const CANCEL = 0x8;
const COMPRESSION_ERROR = 0x9;
const ENHANCE_YOUR_CALM = 0xb;

const SETTINGS_HEADER_TABLE_SIZE = 0x1;
const SETTINGS_ENABLE_PUSH = 0x2;
const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
const SETTINGS_MAX_FRAME_SIZE = 0x5;

const DEFAULT_WINDOW = 65_535;
const MAX_WINDOW = 2 ** 31 - 1;
const MAX_STREAM_ID = 2 ** 31 - 1;
const MIN_FRAME = 16_384;
const MAX_FRAME = 16_777_215;
/** The largest frame accepted: the default, never raised. */
const LOCAL_MAX_FRAME = MIN_FRAME;
/** Each call's receive window: room for the largest answer accepted, so no stream ever needs a WINDOW_UPDATE. */
const STREAM_WINDOW = 256 * 1024;
/** The connection's receive window, topped up once half of it has been read. */
const CONNECTION_WINDOW = 1024 * 1024;
/** A header block with its CONTINUATIONs may not be larger than this. */
const MAX_HEADER_BLOCK = 64 * 1024;
/** Request header blocks and decoded answer header blocks kept for reuse, per connection (forgotten all at once when full). */
const MAX_REMEMBERED_BLOCKS = 64;

/** What a header block of an answer says that the caller reads. */
interface AnswerFields {
  readonly status: string | undefined;
  readonly contentType: string | undefined;
  readonly grpcStatus: string | undefined;
}

const UNAVAILABLE = Object.freeze({ kind: 'unavailable' }) satisfies UnaryOutcome;
const UNPROCESSED = Object.freeze({ kind: 'unprocessed' }) satisfies UnaryOutcome;
const TIMEOUT = Object.freeze({ kind: 'timeout' }) satisfies UnaryOutcome;
const TOO_LARGE = Object.freeze({ kind: 'too_large' }) satisfies UnaryOutcome;

/** One call: waiting for a stream, then open until its answer ends, it is reset, or its deadline passes. */
class Call {
  id = 0;
  sendWindow = 0;
  sent = 0;
  recvWindow = STREAM_WINDOW;
  answered = false;
  httpStatus: string | undefined;
  contentType: string | undefined;
  grpcStatus: string | undefined;
  readonly chunks: Buffer[] = [];
  bytes = 0;
  timer: NodeJS.Timeout | undefined;
  settled = false;
  readonly headerBlock: Buffer;
  /** The length-prefixed gRPC message, the request's DATA. */
  readonly body: Buffer;
  readonly maxAnswer: number;
  readonly resolve: (outcome: UnaryOutcome) => void;

  constructor(headerBlock: Buffer, body: Buffer, maxAnswer: number, resolve: (outcome: UnaryOutcome) => void) {
    this.headerBlock = headerBlock;
    this.body = body;
    this.maxAnswer = maxAnswer;
    this.resolve = resolve;
  }
}

export class UnaryConnection {
  readonly #socket: Socket;
  readonly #authority: string;
  readonly #events: ConnectionEvents;
  /** Request header blocks by timeout and path: a validator's are the same on every call. */
  readonly #requestBlocks = new BoundedMemo<Buffer>(MAX_REMEMBERED_BLOCKS);
  /** Answer header blocks already decoded, by their bytes: with no dynamic table the same bytes always say the same. */
  readonly #answerBlocks = new BoundedMemo<AnswerFields>(MAX_REMEMBERED_BLOCKS);
  readonly #calls = new Map<number, Call>();
  readonly #waiting: Call[] = [];
  readonly #blocked = new Set<Call>();
  #out: Buffer[] = [];
  #state: 'open' | 'draining' | 'closed' = 'open';
  #connected = false;
  #sawSettings = false;
  #nextId = 1;
  #peerMaxConcurrent = Number.POSITIVE_INFINITY;
  #peerInitialWindow = DEFAULT_WINDOW;
  #peerMaxFrame = MIN_FRAME;
  #sendWindow = DEFAULT_WINDOW;
  #recvWindow = CONNECTION_WINDOW;
  #recvUnacknowledged = 0;
  #input: Buffer | undefined;
  #headerBlock:
    | { readonly id: number; readonly parts: Buffer[]; bytes: number; readonly endStream: boolean }
    | undefined;

  constructor(address: Address, authority: string, events: ConnectionEvents) {
    this.#authority = authority;
    this.#events = events;
    this.#socket = 'path' in address ? netConnect(address.path) : netConnect(address.port, address.host);
    this.#socket.setNoDelay(true);
    // An idle connection must not keep a stopping process alive; a call's deadline timer does while it runs.
    this.#socket.unref();
    this.#socket.on('connect', () => {
      this.#connected = true;
      this.#events.connected();
    });
    this.#socket.on('data', (chunk: Buffer) => this.#read(chunk));
    this.#socket.on('error', () => this.#fail());
    this.#socket.on('close', () => this.#fail());
    const settings = Buffer.alloc(18);
    settings.writeUInt16BE(SETTINGS_HEADER_TABLE_SIZE, 0);
    settings.writeUInt32BE(0, 2);
    settings.writeUInt16BE(SETTINGS_ENABLE_PUSH, 6);
    settings.writeUInt32BE(0, 8);
    settings.writeUInt16BE(SETTINGS_INITIAL_WINDOW_SIZE, 12);
    settings.writeUInt32BE(STREAM_WINDOW, 14);
    this.#out.push(PREFACE);
    this.#frame(SETTINGS, 0, 0, settings);
    this.#windowUpdate(0, CONNECTION_WINDOW - DEFAULT_WINDOW);
    this.#flush();
  }

  /** False once the connection is closing or out of stream ids: the owner dials another for new calls. */
  get acceptsCalls(): boolean {
    return this.#state === 'open';
  }

  /** One unary call to `path`; never rejects. `message` is the encoded request, sent as one uncompressed gRPC message. */
  call(path: string, message: Buffer, timeoutMs: number, maxAnswer: number): Promise<UnaryOutcome> {
    if (this.#state !== 'open') return Promise.resolve(UNPROCESSED);
    return new Promise((resolve) => {
      const body = Buffer.allocUnsafe(5 + message.length);
      body[0] = 0;
      body.writeUInt32BE(message.length, 1);
      message.copy(body, 5);
      const call = new Call(this.#requestBlock(path, Math.max(1, Math.ceil(timeoutMs))), body, maxAnswer, resolve);
      call.timer = setTimeout(() => this.#timeout(call), timeoutMs);
      if (this.#calls.size < this.#peerMaxConcurrent) this.#open(call);
      else this.#waiting.push(call);
      this.#flush();
    });
  }

  /** Ends the connection politely; calls still running fail `unavailable`. */
  close(): void {
    if (this.#state === 'closed') return;
    this.#goaway(NO_ERROR);
    this.#flush();
    this.#fail();
  }

  #requestBlock(path: string, timeoutMs: number): Buffer {
    return this.#requestBlocks.get(`${timeoutMs}m${path}`, () =>
      Buffer.concat([
        indexedField(':method', 'POST'),
        indexedField(':scheme', 'http'),
        literalField(':path', path),
        literalField(':authority', this.#authority),
        literalField('content-type', 'application/grpc'),
        literalField('te', 'trailers'),
        literalField('grpc-timeout', `${timeoutMs}m`),
      ]),
    );
  }

  #open(call: Call): void {
    call.id = this.#nextId;
    this.#nextId += 2;
    call.sendWindow = this.#peerInitialWindow;
    this.#calls.set(call.id, call);
    const block = call.headerBlock;
    let at = Math.min(block.length, this.#peerMaxFrame);
    this.#frame(HEADERS, at === block.length ? END_HEADERS : 0, call.id, block.subarray(0, at));
    while (at < block.length) {
      const end = Math.min(block.length, at + this.#peerMaxFrame);
      this.#frame(CONTINUATION, end === block.length ? END_HEADERS : 0, call.id, block.subarray(at, end));
      at = end;
    }
    this.#sendData(call);
    if (this.#nextId > MAX_STREAM_ID) this.#drain();
  }

  /** Sends as much of the call's DATA as the windows allow; the rest waits for a WINDOW_UPDATE. */
  #sendData(call: Call): void {
    const body = call.body;
    while (call.sent < body.length) {
      const n = Math.min(body.length - call.sent, call.sendWindow, this.#sendWindow, this.#peerMaxFrame);
      if (n <= 0) {
        this.#blocked.add(call);
        return;
      }
      const end = call.sent + n;
      this.#frame(DATA, end === body.length ? END_STREAM : 0, call.id, body.subarray(call.sent, end));
      call.sent = end;
      call.sendWindow -= n;
      this.#sendWindow -= n;
    }
    this.#blocked.delete(call);
  }

  #read(chunk: Buffer): void {
    const input = this.#input === undefined ? chunk : Buffer.concat([this.#input, chunk]);
    let at = 0;
    while (input.length - at >= FRAME_HEADER) {
      const length = input.readUIntBE(at, 3);
      if (length > LOCAL_MAX_FRAME) {
        this.#connectionError(FRAME_SIZE_ERROR);
        return;
      }
      if (input.length - at - FRAME_HEADER < length) break;
      const type = input[at + 3] as number;
      const flags = input[at + 4] as number;
      const id = input.readUInt32BE(at + 5) & 0x7fffffff;
      const payload = input.subarray(at + FRAME_HEADER, at + FRAME_HEADER + length);
      at += FRAME_HEADER + length;
      if (!this.#receive(type, flags, id, payload)) return;
    }
    this.#input = at === input.length ? undefined : input.subarray(at);
    this.#flush();
  }

  /** Handles one frame; false when it ended the connection. */
  #receive(type: number, flags: number, id: number, payload: Buffer): boolean {
    // The server's preface is a SETTINGS frame; a header block is followed by its CONTINUATIONs and nothing else.
    if (!this.#sawSettings && type !== SETTINGS) return this.#connectionError(PROTOCOL_ERROR);
    if (this.#headerBlock !== undefined && type !== CONTINUATION) return this.#connectionError(PROTOCOL_ERROR);
    switch (type) {
      case DATA:
        return this.#data(flags, id, payload);
      case HEADERS:
        return this.#headers(flags, id, payload);
      case CONTINUATION:
        return this.#continuation(flags, id, payload);
      case PRIORITY:
        return id === 0 ? this.#connectionError(PROTOCOL_ERROR) : true;
      case RST_STREAM:
        if (id === 0 || !this.#opened(id)) return this.#connectionError(PROTOCOL_ERROR);
        if (payload.length !== 4) return this.#connectionError(FRAME_SIZE_ERROR);
        this.#finish(id, payload.readUInt32BE(0) === REFUSED_STREAM ? UNPROCESSED : UNAVAILABLE);
        return true;
      case SETTINGS:
        return this.#settings(flags, id, payload);
      case PUSH_PROMISE:
        // Push is disabled in this client's SETTINGS.
        return this.#connectionError(PROTOCOL_ERROR);
      case PING:
        if (id !== 0) return this.#connectionError(PROTOCOL_ERROR);
        if (payload.length !== 8) return this.#connectionError(FRAME_SIZE_ERROR);
        if ((flags & ACK) === 0) this.#frame(PING, ACK, 0, payload);
        return true;
      case GOAWAY:
        if (id !== 0) return this.#connectionError(PROTOCOL_ERROR);
        if (payload.length < 8) return this.#connectionError(FRAME_SIZE_ERROR);
        this.#goneAway(payload.readUInt32BE(0) & 0x7fffffff);
        return this.#state !== 'closed';
      case WINDOW_UPDATE:
        return this.#windowUpdated(id, payload);
      default:
        // Unknown frame types are ignored (RFC 9113 §4.1).
        return true;
    }
  }

  /** A stream id this client has opened (odd, below the next), whether or not it is still open. */
  #opened(id: number): boolean {
    return (id & 1) === 1 && id < this.#nextId;
  }

  #data(flags: number, id: number, payload: Buffer): boolean {
    if (id === 0 || !this.#opened(id)) return this.#connectionError(PROTOCOL_ERROR);
    // Every DATA frame counts against the connection's window, a cancelled call's late ones too.
    this.#recvWindow -= payload.length;
    if (this.#recvWindow < 0) return this.#connectionError(FLOW_CONTROL_ERROR);
    this.#recvUnacknowledged += payload.length;
    if (this.#recvUnacknowledged >= CONNECTION_WINDOW / 2) {
      this.#windowUpdate(0, this.#recvUnacknowledged);
      this.#recvWindow += this.#recvUnacknowledged;
      this.#recvUnacknowledged = 0;
    }
    let body = payload;
    if ((flags & PADDED) !== 0) {
      const padding = payload[0] ?? 0;
      if (payload.length === 0 || padding >= payload.length) return this.#connectionError(PROTOCOL_ERROR);
      body = payload.subarray(1, payload.length - padding);
    }
    const call = this.#calls.get(id);
    if (call === undefined) return true;
    call.recvWindow -= payload.length;
    if (call.recvWindow < 0) return this.#streamError(call, FLOW_CONTROL_ERROR);
    if (!call.answered) return this.#streamError(call, PROTOCOL_ERROR);
    call.bytes += body.length;
    if (call.bytes > call.maxAnswer) {
      this.#reset(call, CANCEL, TOO_LARGE);
      return true;
    }
    if (body.length > 0) call.chunks.push(body);
    if ((flags & END_STREAM) !== 0) this.#complete(call);
    return true;
  }

  #headers(flags: number, id: number, payload: Buffer): boolean {
    if (id === 0 || !this.#opened(id)) return this.#connectionError(PROTOCOL_ERROR);
    let start = 0;
    let end = payload.length;
    if ((flags & PADDED) !== 0) {
      start = 1;
      end -= payload[0] ?? 0;
    }
    if ((flags & PRIORITY_FLAG) !== 0) start += 5;
    if (start > end) return this.#connectionError(PROTOCOL_ERROR);
    const fragment = payload.subarray(start, end);
    const endStream = (flags & END_STREAM) !== 0;
    if ((flags & END_HEADERS) !== 0) return this.#headerBlockDone(id, fragment, endStream);
    this.#headerBlock = { id, parts: [fragment], bytes: fragment.length, endStream };
    return true;
  }

  #continuation(flags: number, id: number, payload: Buffer): boolean {
    const pending = this.#headerBlock;
    if (pending === undefined || pending.id !== id) return this.#connectionError(PROTOCOL_ERROR);
    pending.parts.push(payload);
    pending.bytes += payload.length;
    if (pending.bytes > MAX_HEADER_BLOCK) return this.#connectionError(ENHANCE_YOUR_CALM);
    if ((flags & END_HEADERS) === 0) return true;
    this.#headerBlock = undefined;
    return this.#headerBlockDone(id, Buffer.concat(pending.parts, pending.bytes), pending.endStream);
  }

  #headerBlockDone(id: number, block: Buffer, endStream: boolean): boolean {
    const call = this.#calls.get(id);
    // With no dynamic table a block carries no state: one for a call that is gone can go unread.
    if (call === undefined) return true;
    const fields = this.#answerFields(block);
    if (fields === undefined) return this.#connectionError(COMPRESSION_ERROR);
    const { status, contentType, grpcStatus } = fields;
    if (!call.answered) {
      // An informational (1xx) response comes before the real one.
      if (status !== undefined && status.startsWith('1') && !endStream) return true;
      call.answered = true;
      call.httpStatus = status;
      call.contentType = contentType;
      // A trailers-only answer carries grpc-status in its only header block.
      call.grpcStatus = grpcStatus;
      if (endStream) this.#complete(call);
      return true;
    }
    // Trailers end the stream; a second header block that does not is malformed.
    if (!endStream) return this.#streamError(call, PROTOCOL_ERROR);
    call.grpcStatus = grpcStatus;
    this.#complete(call);
    return true;
  }

  /** The fields of an answer's header block, or undefined when it is not valid HPACK for a table of size 0. */
  #answerFields(block: Buffer): AnswerFields | undefined {
    try {
      return this.#answerBlocks.get(block.toString('latin1'), decodeAnswerFields);
    } catch (err) {
      if (err instanceof CompressionError) return undefined;
      throw err;
    }
  }

  #settings(flags: number, id: number, payload: Buffer): boolean {
    if (id !== 0) return this.#connectionError(PROTOCOL_ERROR);
    if ((flags & ACK) !== 0) return payload.length === 0 ? true : this.#connectionError(FRAME_SIZE_ERROR);
    if (payload.length % 6 !== 0) return this.#connectionError(FRAME_SIZE_ERROR);
    this.#sawSettings = true;
    for (let at = 0; at < payload.length; at += 6) {
      const value = payload.readUInt32BE(at + 2);
      switch (payload.readUInt16BE(at)) {
        case SETTINGS_MAX_CONCURRENT_STREAMS:
          this.#peerMaxConcurrent = value;
          break;
        case SETTINGS_INITIAL_WINDOW_SIZE: {
          if (value > MAX_WINDOW) return this.#connectionError(FLOW_CONTROL_ERROR);
          const delta = value - this.#peerInitialWindow;
          this.#peerInitialWindow = value;
          for (const call of this.#calls.values()) {
            call.sendWindow += delta;
            if (call.sendWindow > MAX_WINDOW) return this.#connectionError(FLOW_CONTROL_ERROR);
          }
          break;
        }
        case SETTINGS_MAX_FRAME_SIZE:
          if (value < MIN_FRAME || value > MAX_FRAME) return this.#connectionError(PROTOCOL_ERROR);
          this.#peerMaxFrame = value;
          break;
        default:
          // The peer's header table size and list size bind an encoder that never indexes and headers this small.
          break;
      }
    }
    this.#frame(SETTINGS, ACK, 0, Buffer.alloc(0));
    this.#unblock();
    this.#admit();
    return true;
  }

  #windowUpdated(id: number, payload: Buffer): boolean {
    if (payload.length !== 4) return this.#connectionError(FRAME_SIZE_ERROR);
    const increment = payload.readUInt32BE(0) & 0x7fffffff;
    if (id === 0) {
      if (increment === 0) return this.#connectionError(PROTOCOL_ERROR);
      this.#sendWindow += increment;
      if (this.#sendWindow > MAX_WINDOW) return this.#connectionError(FLOW_CONTROL_ERROR);
    } else {
      const call = this.#calls.get(id);
      if (call === undefined) return this.#opened(id) ? true : this.#connectionError(PROTOCOL_ERROR);
      if (increment === 0) return this.#streamError(call, PROTOCOL_ERROR);
      call.sendWindow += increment;
      if (call.sendWindow > MAX_WINDOW) return this.#streamError(call, FLOW_CONTROL_ERROR);
    }
    this.#unblock();
    return true;
  }

  #unblock(): void {
    for (const call of this.#blocked) this.#sendData(call);
  }

  /** Opens waiting calls while the peer's stream limit allows. */
  #admit(): void {
    while (this.#waiting.length > 0 && this.#calls.size < this.#peerMaxConcurrent) {
      const call = this.#waiting.shift() as Call;
      if (this.#state === 'open') this.#open(call);
      else this.#settle(call, UNPROCESSED);
    }
  }

  #complete(call: Call): void {
    const body = call.chunks.length === 1 ? (call.chunks[0] as Buffer) : Buffer.concat(call.chunks, call.bytes);
    const outcome: UnaryOutcome = {
      kind: 'answer',
      httpStatus: call.httpStatus,
      contentType: call.contentType,
      grpcStatus: call.grpcStatus,
      body,
    };
    // An answer that ends the stream before the request was all sent: stop sending (RFC 9113 §8.1).
    if (call.sent < call.body.length) this.#reset(call, NO_ERROR, outcome);
    else this.#finish(call.id, outcome);
  }

  /** Ends a call's stream from this side with RST_STREAM. */
  #reset(call: Call, code: number, outcome: UnaryOutcome): void {
    this.#frame(RST_STREAM, 0, call.id, uint32(code));
    this.#finish(call.id, outcome);
  }

  #streamError(call: Call, code: number): boolean {
    this.#reset(call, code, UNAVAILABLE);
    return true;
  }

  /** Forgets an open call and settles it. */
  #finish(id: number, outcome: UnaryOutcome): void {
    const call = this.#calls.get(id);
    if (call === undefined) return;
    this.#calls.delete(id);
    this.#blocked.delete(call);
    this.#settle(call, outcome);
    this.#admit();
    if (this.#state === 'draining' && this.#calls.size === 0) this.close();
  }

  #timeout(call: Call): void {
    call.timer = undefined;
    const waiting = this.#waiting.indexOf(call);
    if (waiting >= 0) {
      this.#waiting.splice(waiting, 1);
      this.#settle(call, TIMEOUT);
      return;
    }
    if (this.#calls.get(call.id) === call) this.#reset(call, CANCEL, TIMEOUT);
    this.#flush();
  }

  #settle(call: Call, outcome: UnaryOutcome): void {
    if (call.settled) return;
    call.settled = true;
    if (call.timer !== undefined) clearTimeout(call.timer);
    call.resolve(outcome);
  }

  /** GOAWAY from the peer: calls above its last stream are handed back unprocessed, the rest finish, and no new ones start here. */
  #goneAway(lastId: number): void {
    this.#drain();
    for (const call of this.#calls.values()) if (call.id > lastId) this.#finish(call.id, UNPROCESSED);
  }

  #drain(): void {
    if (this.#state !== 'open') return;
    this.#state = 'draining';
    this.#events.gone(this.#connected);
    for (const call of this.#waiting.splice(0)) this.#settle(call, UNPROCESSED);
    if (this.#calls.size === 0) this.close();
  }

  #connectionError(code: number): false {
    this.#goaway(code);
    this.#flush();
    this.#fail();
    return false;
  }

  #goaway(code: number): void {
    // This client accepts no streams from the peer, so the last one it processed is 0.
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(code, 4);
    this.#frame(GOAWAY, 0, 0, payload);
  }

  #fail(): void {
    if (this.#state === 'closed') return;
    const wasOpen = this.#state === 'open';
    this.#state = 'closed';
    this.#socket.destroy();
    for (const call of this.#calls.values()) this.#settle(call, UNAVAILABLE);
    for (const call of this.#waiting) this.#settle(call, UNPROCESSED);
    this.#calls.clear();
    this.#waiting.length = 0;
    this.#blocked.clear();
    if (wasOpen) this.#events.gone(this.#connected);
  }

  #windowUpdate(id: number, increment: number): void {
    this.#frame(WINDOW_UPDATE, 0, id, uint32(increment));
  }

  #frame(type: number, flags: number, id: number, payload: Buffer): void {
    const header = Buffer.allocUnsafe(FRAME_HEADER);
    header.writeUIntBE(payload.length, 0, 3);
    header[3] = type;
    header[4] = flags;
    header.writeUInt32BE(id, 5);
    this.#out.push(header, payload);
  }

  /** Everything queued since the last flush, in one write. */
  #flush(): void {
    const out = this.#out;
    if (out.length === 0) return;
    this.#out = [];
    if (this.#socket.destroyed) return;
    this.#socket.write(out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out));
  }
}

/** Decodes an answer header block from its latin1 memo key (a miss: once per distinct block). Throws CompressionError. */
function decodeAnswerFields(key: string): AnswerFields {
  let status: string | undefined;
  let contentType: string | undefined;
  let grpcStatus: string | undefined;
  decodeHeaderBlock(Buffer.from(key, 'latin1'), (name, value) => {
    if (name === ':status') status = value;
    else if (name === 'content-type') contentType = value;
    else if (name === 'grpc-status') grpcStatus = value;
  });
  return { status, contentType, grpcStatus };
}

/** A 4-byte big-endian payload: an error code, a window increment. */
function uint32(value: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(value, 0);
  return payload;
}
