/**
 * The HPACK that a gRPC unary client needs (RFC 7541). Sending: literal
 * fields without indexing and without Huffman coding, so the encoder keeps
 * no state. Receiving: the client advertises a dynamic table of size 0
 * (SETTINGS_HEADER_TABLE_SIZE), so a conforming peer refers to the static
 * table only and every header block decodes on its own; a reference past
 * the static table, or a table size update above 0, is a compression error.
 */
import { huffmanDecode } from './huffman.ts';

// prettier-ignore
const STATIC_TABLE: readonly (readonly [string, string])[] = [
  ['', ''],
  [':authority', ''], [':method', 'GET'], [':method', 'POST'], [':path', '/'], [':path', '/index.html'],
  [':scheme', 'http'], [':scheme', 'https'], [':status', '200'], [':status', '204'], [':status', '206'],
  [':status', '304'], [':status', '400'], [':status', '404'], [':status', '500'], ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'], ['accept-language', ''], ['accept-ranges', ''], ['accept', ''],
  ['access-control-allow-origin', ''], ['age', ''], ['allow', ''], ['authorization', ''], ['cache-control', ''],
  ['content-disposition', ''], ['content-encoding', ''], ['content-language', ''], ['content-length', ''],
  ['content-location', ''], ['content-range', ''], ['content-type', ''], ['cookie', ''], ['date', ''], ['etag', ''],
  ['expect', ''], ['expires', ''], ['from', ''], ['host', ''], ['if-match', ''], ['if-modified-since', ''],
  ['if-none-match', ''], ['if-range', ''], ['if-unmodified-since', ''], ['last-modified', ''], ['link', ''],
  ['location', ''], ['max-forwards', ''], ['proxy-authenticate', ''], ['proxy-authorization', ''], ['range', ''],
  ['referer', ''], ['refresh', ''], ['retry-after', ''], ['server', ''], ['set-cookie', ''],
  ['strict-transport-security', ''], ['transfer-encoding', ''], ['user-agent', ''], ['vary', ''], ['via', ''],
  ['www-authenticate', ''],
];
const LAST_STATIC = STATIC_TABLE.length - 1;

/** A header block that is not valid HPACK for a table of size 0: a connection error (COMPRESSION_ERROR). */
export class CompressionError extends Error {}

/** The static table index of a name, for the encoder. */
function staticNameIndex(name: string): number | undefined {
  const i = STATIC_TABLE.findIndex(([n], index) => index > 0 && n === name);
  return i > 0 ? i : undefined;
}

/** An integer with an N-bit prefix (§5.1); `first` carries the representation's flag bits. */
function encodeInteger(value: number, prefixBits: number, first: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [first | value];
  const out = [first | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

function encodeString(value: string): Buffer {
  const bytes = Buffer.from(value, 'latin1');
  return Buffer.concat([Buffer.from(encodeInteger(bytes.length, 7, 0)), bytes]);
}

/** A literal header field without indexing (§6.2.2), its name by static index where the table has it. */
export function literalField(name: string, value: string): Buffer {
  const index = staticNameIndex(name);
  const head =
    index === undefined
      ? Buffer.concat([Buffer.from([0]), encodeString(name)])
      : Buffer.from(encodeInteger(index, 4, 0));
  return Buffer.concat([head, encodeString(value)]);
}

/** An indexed field (§6.1) for a whole static entry, e.g. `:method: POST`. */
export function indexedField(name: string, value: string): Buffer {
  const i = STATIC_TABLE.findIndex(([n, v], index) => index > 0 && n === name && v === value);
  if (i <= 0) throw new TypeError(`no static entry ${name}: ${value}`);
  return Buffer.from(encodeInteger(i, 7, 0x80));
}

/** A cursor over one header block. */
interface Cursor {
  readonly block: Buffer;
  at: number;
}

function decodeInteger(c: Cursor, prefixBits: number): number {
  const max = (1 << prefixBits) - 1;
  let value = next(c) & max;
  if (value < max) return value;
  let shift = 0;
  for (;;) {
    const byte = next(c);
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if ((byte & 0x80) === 0) break;
    // Nothing here is longer than a header block; a longer integer is an attack or garbage.
    if (shift > 28) throw new CompressionError('integer too long');
  }
  return value;
}

function next(c: Cursor): number {
  if (c.at >= c.block.length) throw new CompressionError('truncated header block');
  return c.block[c.at++] as number;
}

function decodeString(c: Cursor): string {
  const huffman = ((c.block[c.at] as number) & 0x80) !== 0;
  const length = decodeInteger(c, 7);
  const end = c.at + length;
  if (end > c.block.length) throw new CompressionError('truncated string');
  const value = huffman ? huffmanDecode(c.block, c.at, end) : c.block.toString('latin1', c.at, end);
  if (value === undefined) throw new CompressionError('bad Huffman string');
  c.at = end;
  return value;
}

function staticEntry(index: number): readonly [string, string] {
  if (index === 0 || index > LAST_STATIC) throw new CompressionError('index outside the static table');
  return STATIC_TABLE[index] as readonly [string, string];
}

/** Calls `field` with each name and value of the block, in order. Throws CompressionError. */
export function decodeHeaderBlock(block: Buffer, field: (name: string, value: string) => void): void {
  const c: Cursor = { block, at: 0 };
  while (c.at < block.length) {
    const first = block[c.at] as number;
    if (first & 0x80) {
      const [name, value] = staticEntry(decodeInteger(c, 7));
      field(name, value);
    } else if ((first & 0xe0) === 0x20) {
      // A dynamic table size update: only 0, the size this client allows.
      if (decodeInteger(c, 5) !== 0) throw new CompressionError('table size above the advertised 0');
    } else {
      // Literal with incremental indexing (01), without indexing (0000) or never indexed (0001):
      // with a table of size 0 nothing is ever added, so all three read alike.
      const index = decodeInteger(c, (first & 0xc0) === 0x40 ? 6 : 4);
      const name = index === 0 ? decodeString(c) : staticEntry(index)[0];
      field(name, decodeString(c));
    }
  }
}
