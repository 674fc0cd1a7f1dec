import {
  CLOSE_OBJECT,
  COLON,
  COMMA,
  FAIL,
  lastEscaped,
  OPEN_OBJECT,
  QUOTE,
  shrinkStack,
  skipString,
  skipValue,
  skipWs,
} from './bytes.ts';

/**
 * The body without some members of its `params` object, every other byte as
 * the client wrote it: toolgate takes back what it added to a call (the
 * 2026-07-28 `requestState` of an approval, the client's answer to it) before
 * the original call goes upstream. The members that stay keep their bytes
 * exactly; only the whitespace between them is not kept. A body the scanner
 * (bytes.ts, shared with meta-splice.ts) cannot read as JSON is returned as
 * it came.
 */
export function withoutParamsMembers(body: Buffer, names: ReadonlySet<string>): Buffer {
  const top = skipWs(body, 0);
  if (body[top] !== OPEN_OBJECT) return body;
  const message = members(body, top);
  shrinkStack();
  for (const m of message ?? []) {
    if (m.name !== 'params' || body[m.valueStart] !== OPEN_OBJECT) continue;
    const inner = members(body, m.valueStart);
    shrinkStack();
    if (inner === undefined) return body;
    const kept = inner.filter((p) => !names.has(p.name));
    if (kept.length === inner.length) return body;
    const parts: Buffer[] = [body.subarray(0, m.valueStart), OPEN];
    kept.forEach((p, i) => parts.push(...(i === 0 ? [] : [SEPARATOR]), body.subarray(p.start, p.end)));
    parts.push(CLOSE, body.subarray(m.end));
    return Buffer.concat(parts);
  }
  return body;
}

const OPEN = Buffer.from('{');
const CLOSE = Buffer.from('}');
const SEPARATOR = Buffer.from(',');

interface Member {
  readonly name: string;
  /** The key's opening quote. */
  readonly start: number;
  readonly valueStart: number;
  /** Just past the value. */
  readonly end: number;
}

/** The members of the object whose brace is at `open`; undefined when it is not valid JSON. */
function members(b: Buffer, open: number): Member[] | undefined {
  const out: Member[] = [];
  let i = skipWs(b, open + 1);
  if (b[i] === CLOSE_OBJECT) return out;
  for (;;) {
    if (b[i] !== QUOTE) return undefined;
    const keyEnd = skipString(b, i);
    if (keyEnd === FAIL) return undefined;
    const name = lastEscaped
      ? (JSON.parse(b.toString('utf8', i, keyEnd)) as string)
      : b.toString('utf8', i + 1, keyEnd - 1);
    const colon = skipWs(b, keyEnd);
    if (b[colon] !== COLON) return undefined;
    const valueStart = skipWs(b, colon + 1);
    const end = skipValue(b, valueStart);
    if (end === FAIL) return undefined;
    out.push({ name, start: i, valueStart, end });
    i = skipWs(b, end);
    if (b[i] === CLOSE_OBJECT) return out;
    if (b[i] !== COMMA) return undefined;
    i = skipWs(b, i + 1);
  }
}
