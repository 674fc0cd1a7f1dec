import { stringEnd, stringValue } from './scan.ts';

/**
 * The body without some members of its `params` object, every other byte as
 * the client wrote it: toolgate takes back what it added to a call (the
 * 2026-07-28 `requestState` of an approval, the client's answer to it) before
 * the original call goes upstream. The members that stay keep their text
 * exactly; only the whitespace between them is not kept.
 *
 * Runs on bodies classification has accepted (valid JSON, no repeated or
 * case-variant member names), so only string literals need care. The text is
 * read as latin1: one character a byte, and UTF-8 never puts an ASCII byte
 * inside a multi-byte character, so structure is found at byte offsets.
 */
export function withoutParamsMembers(body: Buffer, names: ReadonlySet<string>): Buffer {
  const text = body.toString('latin1');
  const top = skipWs(text, 0);
  if (text.charCodeAt(top) !== OPEN_OBJECT) return body;
  for (const m of members(text, top)) {
    if (m.name !== 'params' || text.charCodeAt(m.valueStart) !== OPEN_OBJECT) continue;
    const inner = members(text, m.valueStart);
    const kept = inner.filter((p) => !names.has(p.name));
    if (kept.length === inner.length) return body;
    const params = `{${kept.map((p) => text.slice(p.start, p.end)).join(',')}}`;
    return Buffer.concat([body.subarray(0, m.valueStart), Buffer.from(params, 'latin1'), body.subarray(m.end)]);
  }
  return body;
}

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const COMMA = 0x2c;

interface Member {
  readonly name: string;
  /** The key's opening quote. */
  readonly start: number;
  readonly valueStart: number;
  /** Just past the value. */
  readonly end: number;
}

/** The members of the object whose brace is at `open`. */
function members(text: string, open: number): Member[] {
  const out: Member[] = [];
  let i = skipWs(text, open + 1);
  while (text.charCodeAt(i) === QUOTE) {
    const keyEnd = stringEnd(text, i);
    const valueStart = skipWs(text, skipWs(text, keyEnd) + 1);
    const end = valueEnd(text, valueStart);
    out.push({ name: stringValue(text, i, keyEnd), start: i, valueStart, end });
    i = skipWs(text, end);
    if (text.charCodeAt(i) !== COMMA) break;
    i = skipWs(text, i + 1);
  }
  return out;
}

/** Just past the value starting at `i`. */
function valueEnd(text: string, i: number): number {
  let depth = 0;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      i++;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
      i++;
    } else if (depth === 0) {
      // A number or literal: it ends at the first byte that cannot continue it.
      while (i < text.length && !isDelimiter(text.charCodeAt(i))) i++;
      return i;
    } else {
      i++;
    }
    if (depth === 0) return i;
  }
}

function isDelimiter(c: number): boolean {
  return c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipWs(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}
