/**
 * The HPACK string Huffman code (RFC 7541, Appendix B), decode side only:
 * toolgate never Huffman-encodes what it sends. The code is canonical, so
 * each symbol's code length (the table below, symbols 0 to 255 and then EOS)
 * defines every code; `test/unit/grpc/hpack.test.ts` checks codes derived
 * here against the appendix.
 */

// prettier-ignore
const LENGTHS = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
  5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
  7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
  6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
  30,
];
const EOS = 256;
const MAX_LENGTH = 30;

/** Canonical decoding tables: per code length, the first code, how many codes, and where their symbols start in `SYMBOLS`. */
const FIRST_CODE = new Int32Array(MAX_LENGTH + 1);
const COUNT = new Int32Array(MAX_LENGTH + 1);
const OFFSET = new Int32Array(MAX_LENGTH + 1);
const SYMBOLS = new Uint16Array(LENGTHS.length);
{
  for (const len of LENGTHS) COUNT[len] = (COUNT[len] as number) + 1;
  let code = 0;
  let offset = 0;
  for (let len = 1; len <= MAX_LENGTH; len++) {
    FIRST_CODE[len] = code;
    OFFSET[len] = offset;
    code = (code + (COUNT[len] as number)) << 1;
    offset += COUNT[len] as number;
  }
  const next = OFFSET.slice();
  LENGTHS.forEach((len, symbol) => {
    SYMBOLS[next[len] as number] = symbol;
    next[len] = (next[len] as number) + 1;
  });
}

/** The code of `symbol` (0–256) as [code, length in bits], for the tests against the appendix. */
export function huffmanCode(symbol: number): [number, number] {
  const len = LENGTHS[symbol] as number;
  let rank = 0;
  for (let s = 0; s < symbol; s++) if (LENGTHS[s] === len) rank++;
  return [(FIRST_CODE[len] as number) + rank, len];
}

/**
 * Decodes a Huffman-coded string literal as latin1, or undefined when the
 * input is not one (RFC 7541 §5.2): an EOS symbol inside it, or padding
 * longer than 7 bits or not made of EOS's leading 1 bits.
 */
export function huffmanDecode(input: Uint8Array, start: number, end: number): string | undefined {
  let out = '';
  let code = 0;
  let len = 0;
  for (let i = start; i < end; i++) {
    const byte = input[i] as number;
    for (let bit = 7; bit >= 0; bit--) {
      code = (code << 1) | ((byte >> bit) & 1);
      len++;
      const index = code - (FIRST_CODE[len] as number);
      if (index >= 0 && index < (COUNT[len] as number)) {
        const symbol = SYMBOLS[(OFFSET[len] as number) + index] as number;
        if (symbol === EOS) return undefined;
        out += String.fromCharCode(symbol);
        code = 0;
        len = 0;
      } else if (len >= MAX_LENGTH) return undefined;
    }
  }
  // What is left must be a prefix of EOS (all ones), shorter than a byte.
  return len < 8 && code === (1 << len) - 1 ? out : undefined;
}
