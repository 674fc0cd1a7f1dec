import { isUtf8 } from 'node:buffer';
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
 * Adds string fields to `params._meta` of a JSON-RPC message by editing its
 * text, so every other byte (arguments above all) reaches the upstream
 * exactly as the client wrote it. The whole body is checked against the JSON
 * grammar while it is scanned; anything the splice cannot place without
 * ambiguity (not an object, `params` or `_meta` not objects, a key given
 * twice, invalid JSON or UTF-8) yields undefined and the caller sends the
 * body unchanged.
 *
 * It runs once per forwarded request while tracing is on, so it is one
 * forward pass over the bytes that allocates nothing but the result: keys
 * are compared byte by byte, never decoded unless escaped, and the output is
 * written into a single buffer. The grammar is bytes.ts's scanner, shared
 * with params-members.ts.
 */

/** The object levels the splice looks into: the message (0), its params (1), their _meta (2). */
const MESSAGE = 0;
const META = 2;
const CONTAINER_KEY = ['params', '_meta'] as const;

/** What a scan found; positions are of an object's opening brace, -1 when absent. */
interface Scan {
  readonly names: readonly string[];
  /** UTF-8 sizes of the names. */
  readonly sizes: readonly number[];
  params: number;
  meta: number;
  /** Per name, whether `_meta` already has it. */
  readonly found: boolean[];
  /** Existing members to overwrite, as [start, end, name index] triples in body order. */
  readonly replace: number[];
}

export function spliceMetaFields(body: Buffer, fields: Readonly<Record<string, string>>): Buffer | undefined {
  const names = Object.keys(fields);
  if (names.length === 0) return body;
  if (!isUtf8(body)) return undefined;
  const top = skipWs(body, 0);
  if (body[top] !== OPEN_OBJECT) return undefined;
  const s: Scan = {
    names,
    sizes: names.map((n) => Buffer.byteLength(n)),
    params: -1,
    meta: -1,
    found: names.map(() => false),
    replace: [],
  };
  let end = walk(body, top, MESSAGE, s);
  shrinkStack();
  if (end === FAIL) return undefined;
  end = skipWs(body, end);
  if (end !== body.length) return undefined;

  const member = (i: number) => `${JSON.stringify(names[i])}:${JSON.stringify(fields[names[i] as string])}`;
  let at: number;
  let text: string;
  if (s.params === -1) {
    at = top;
    text = `"params":{"_meta":{${names.map((_, i) => member(i)).join(',')}}}`;
  } else if (s.meta === -1) {
    at = s.params;
    text = `"_meta":{${names.map((_, i) => member(i)).join(',')}}`;
  } else {
    at = s.meta;
    text = names
      .map((_, i) => (s.found[i] ? '' : member(i)))
      .filter((m) => m !== '')
      .join(',');
  }
  if (text !== '' && body[skipWs(body, at + 1)] !== CLOSE_OBJECT) text += ',';
  return build(body, at + 1, text, s.replace, member);
}

/**
 * The body with `text` inserted at `at` and each replaced member rewritten.
 * The insertion comes first: it is right after a brace that encloses (or
 * precedes) every replaced member.
 */
function build(
  body: Buffer,
  at: number,
  text: string,
  replace: readonly number[],
  member: (i: number) => string,
): Buffer {
  const texts = [text];
  let size = body.length + Buffer.byteLength(text);
  for (let r = 0; r < replace.length; r += 3) {
    const t = member(replace[r + 2] as number);
    texts.push(t);
    size += Buffer.byteLength(t) - ((replace[r + 1] as number) - (replace[r] as number));
  }
  const out = Buffer.allocUnsafe(size);
  let pos = body.copy(out, 0, 0, at);
  pos += out.write(text, pos);
  let from = at;
  for (let r = 0; r < replace.length; r += 3) {
    pos += body.copy(out, pos, from, replace[r]);
    pos += out.write(texts[r / 3 + 1] as string, pos);
    from = replace[r + 1] as number;
  }
  body.copy(out, pos, from);
  return out;
}

/**
 * Walks the members of the object whose brace is at `at`. At the message
 * and params levels the one interesting member (`params`, `_meta`) must be
 * an object and is walked a level deeper; at `_meta` the fields to set are
 * recorded. Returns the index after the closing brace, or FAIL.
 */
function walk(b: Buffer, at: number, level: number, s: Scan): number {
  let i = skipWs(b, at + 1);
  if (b[i] === CLOSE_OBJECT) return i + 1;
  for (;;) {
    if (b[i] !== QUOTE) return FAIL;
    const ks = i;
    const ke = skipString(b, i);
    if (ke === FAIL) return FAIL;
    const escaped = lastEscaped;
    let j = skipWs(b, ke);
    if (b[j] !== COLON) return FAIL;
    j = skipWs(b, j + 1);
    let ve: number;
    if (level === META) {
      ve = skipValue(b, j);
      if (ve === FAIL) return FAIL;
      for (let n = 0; n < s.names.length; n++) {
        if (!keyIs(b, ks, ke, escaped, s.names[n] as string, s.sizes[n] as number)) continue;
        if (s.found[n]) return FAIL;
        s.found[n] = true;
        // Replace the whole member so the value is ours whatever was there.
        s.replace.push(ks, ve, n);
      }
    } else if (keyIs(b, ks, ke, escaped, CONTAINER_KEY[level] as string, (CONTAINER_KEY[level] as string).length)) {
      if (b[j] !== OPEN_OBJECT || (level === MESSAGE ? s.params : s.meta) !== -1) return FAIL;
      if (level === MESSAGE) s.params = j;
      else s.meta = j;
      ve = walk(b, j, level + 1, s);
    } else {
      ve = skipValue(b, j);
    }
    if (ve === FAIL) return FAIL;
    i = skipWs(b, ve);
    if (b[i] === CLOSE_OBJECT) return i + 1;
    if (b[i] !== COMMA) return FAIL;
    i = skipWs(b, i + 1);
  }
}

/** Whether the key spanning [start, end) (quotes included) spells `name`, whose UTF-8 size is `size`. */
function keyIs(b: Buffer, start: number, end: number, escaped: boolean, name: string, size: number): boolean {
  if (escaped) return JSON.parse(b.toString('utf8', start, end)) === name;
  const n = end - start - 2;
  if (n !== size) return false;
  for (let k = 0; k < name.length; k++) {
    const c = name.charCodeAt(k);
    if (c >= 0x80) return b.toString('utf8', start + 1, end - 1) === name;
    if (b[start + 1 + k] !== c) return false;
  }
  return true;
}
