import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompressionError, decodeHeaderBlock, indexedField, literalField } from '../../../src/grpc/h2/hpack.ts';
import { huffmanCode, huffmanDecode } from '../../../src/grpc/h2/huffman.ts';

/**
 * The validator client's HPACK against RFC 7541: the Huffman code of
 * Appendix B (derived from code lengths, checked against the appendix's
 * codes), the worked examples of Appendix C, and the blocks a client that
 * advertises a dynamic table of size 0 must refuse.
 */

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

function decode(block: Buffer): string[] {
  const fields: string[] = [];
  decodeHeaderBlock(block, (name, value) => fields.push(`${name}: ${value}`));
  return fields;
}

describe('the Huffman code', () => {
  it('derives the codes of RFC 7541 Appendix B from their lengths', () => {
    // [symbol, code as hex aligned to the LSB, length], one or more per length in the appendix.
    const appendix: [number, number, number][] = [
      [48, 0x0, 5],
      [97, 0x3, 5],
      [116, 0x9, 5],
      [32, 0x14, 6],
      [47, 0x18, 6],
      [95, 0x22, 6],
      [58, 0x5c, 7],
      [122, 0x7b, 7],
      [38, 0xf8, 8],
      [90, 0xfd, 8],
      [33, 0x3f8, 10],
      [63, 0x3fc, 10],
      [39, 0x7fa, 11],
      [124, 0x7fc, 11],
      [35, 0xffa, 12],
      [62, 0xffb, 12],
      [0, 0x1ff8, 13],
      [126, 0x1ffd, 13],
      [94, 0x3ffc, 14],
      [125, 0x3ffd, 14],
      [60, 0x7ffc, 15],
      [123, 0x7ffe, 15],
      [92, 0x7fff0, 19],
      [195, 0x7fff1, 19],
      [208, 0x7fff2, 19],
      [128, 0xfffe6, 20],
      [226, 0xfffed, 20],
      [153, 0x1fffdc, 21],
      [230, 0x1fffe8, 21],
      [129, 0x3fffd2, 22],
      [233, 0x3fffeb, 22],
      [1, 0x7fffd8, 23],
      [239, 0x7ffff4, 23],
      [9, 0xffffea, 24],
      [237, 0xfffff5, 24],
      [199, 0x1ffffec, 25],
      [235, 0x1ffffef, 25],
      [192, 0x3ffffe0, 26],
      [255, 0x3ffffee, 26],
      [203, 0x7ffffde, 27],
      [254, 0x7fffff0, 27],
      [2, 0xfffffe2, 28],
      [249, 0xffffffe, 28],
      [10, 0x3ffffffc, 30],
      [256, 0x3fffffff, 30],
    ];
    for (const [symbol, code, length] of appendix)
      assert.deepEqual(huffmanCode(symbol), [code, length], `symbol ${symbol}`);
  });

  it('decodes the Huffman-coded literals of Appendix C.4 and C.6', () => {
    const cases: [string, string][] = [
      ['f1e3 c2e5 f23a 6ba0 ab90 f4ff', 'www.example.com'],
      ['a8eb 1064 9cbf', 'no-cache'],
      ['25a8 49e9 5ba9 7d7f', 'custom-key'],
      ['25a8 49e9 5bb8 e8b4 bf', 'custom-value'],
      ['6402', '302'],
      ['d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff', 'Mon, 21 Oct 2013 20:13:21 GMT'],
    ];
    for (const [coded, text] of cases) {
      const bytes = hex(coded);
      assert.equal(huffmanDecode(bytes, 0, bytes.length), text);
    }
  });

  it('refuses padding that is not a short prefix of EOS, and EOS inside a string', () => {
    // '0' is 00000; padded with zeros instead of ones.
    assert.equal(huffmanDecode(Buffer.from([0b00000000]), 0, 1), undefined);
    // Eight bits of padding after '0' (00000|111 11111111): a whole byte of padding.
    assert.equal(huffmanDecode(Buffer.from([0b00000111, 0xff]), 0, 2), undefined);
    // EOS (30 ones) as data.
    assert.equal(huffmanDecode(Buffer.from([0xff, 0xff, 0xff, 0xff]), 0, 4), undefined);
    assert.equal(huffmanDecode(Buffer.from([0b00000111]), 0, 1), '0');
  });
});

describe('header blocks', () => {
  it('decodes Appendix C.6.1 (literals with incremental indexing, Huffman-coded) with a table of size 0', () => {
    const block = hex(`4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
      2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3`);
    assert.deepEqual(decode(block), [
      ':status: 302',
      'cache-control: private',
      'date: Mon, 21 Oct 2013 20:13:21 GMT',
      'location: https://www.example.com',
    ]);
  });

  it('decodes Appendix C.2.2, C.2.3 and C.4.1 (indexed, without indexing, never indexed)', () => {
    assert.deepEqual(decode(hex('040c 2f73 616d 706c 652f 7061 7468')), [':path: /sample/path']);
    assert.deepEqual(decode(hex('1008 7061 7373 776f 7264 0673 6563 7265 74')), ['password: secret']);
    assert.deepEqual(decode(hex('8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff')), [
      ':method: GET',
      ':scheme: http',
      ':path: /',
      ':authority: www.example.com',
    ]);
  });

  it('reads what the encoder writes, long names and values included (multi-byte integers, C.1.2)', () => {
    const block = Buffer.concat([
      indexedField(':method', 'POST'),
      literalField(':path', '/toolgate.v1.Validator/Validate'),
      literalField('content-type', 'application/grpc'),
      literalField('te', 'trailers'),
      literalField('x-long', 'v'.repeat(1337)),
    ]);
    assert.deepEqual(decode(block), [
      ':method: POST',
      ':path: /toolgate.v1.Validator/Validate',
      'content-type: application/grpc',
      'te: trailers',
      `x-long: ${'v'.repeat(1337)}`,
    ]);
    // 1337 on a 7-bit prefix: 127, then 1210 as 0xba 0x09.
    const long = literalField('x-long', 'v'.repeat(1337));
    assert.deepEqual([...long.subarray(8, 11)], [0x7f, 0xba, 0x09]);
  });

  it('refuses what a table of size 0 cannot hold: dynamic indices and size updates above 0', () => {
    // C.4.3 refers to the dynamic table (index 63).
    assert.throws(() => decode(hex('8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf')), CompressionError);
    assert.throws(() => decode(Buffer.from([0xbe])), CompressionError);
    assert.throws(() => decode(Buffer.from([0x3f, 0xe1, 0x1f])), CompressionError);
    assert.deepEqual(decode(Buffer.from([0x20, 0x88])), [':status: 200']);
    assert.throws(() => decode(Buffer.from([0x80])), CompressionError);
  });

  it('refuses truncated blocks and integers longer than any header', () => {
    assert.throws(() => decode(hex('040c 2f73 616d')), CompressionError);
    assert.throws(() => decode(Buffer.from([0x04])), CompressionError);
    assert.throws(() => decode(Buffer.from([0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])), CompressionError);
    assert.throws(() => decode(Buffer.from([0x00, 0x82, 0x00, 0x00, 0x01, 0x61])), CompressionError);
  });
});
