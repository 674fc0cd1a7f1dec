import { isUtf8 } from 'node:buffer';

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
 * written into a single buffer. Nesting below `_meta`'s level is walked
 * iteratively, so depth costs heap, never stack.
 */

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const MINUS = 0x2d;

const FAIL = -1;

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

/** Set by skipString: whether the string it just passed holds an escape. */
let lastEscaped = false;

/** Open containers of skipValue (1 object, 2 array), reused across calls. */
let stack = new Uint8Array(64);
const STACK_KEPT = 4096;

export function spliceMetaFields(body: Buffer, fields: Readonly<Record<string, string>>): Buffer | undefined {
  const names = Object.keys(fields);
  if (names.length === 0) return body;
  if (!isUtf8(body)) return undefined;
  const top = skipWs(body, 0);
  if (body[top] !== OPEN_OBJECT) return undefined;
  const s: Scan = { names, sizes: names.map((n) => Buffer.byteLength(n)), params: -1, meta: -1, found: names.map(() => false), replace: [] };
  let end = walk(body, top, MESSAGE, s);
  if (stack.length > STACK_KEPT) stack = new Uint8Array(64);
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
    text = names.map((_, i) => (s.found[i] ? '' : member(i))).filter((m) => m !== '').join(',');
  }
  if (text !== '' && body[skipWs(body, at + 1)] !== CLOSE_OBJECT) text += ',';
  return build(body, at + 1, text, s.replace, member);
}

/**
 * The body with `text` inserted at `at` and each replaced member rewritten.
 * The insertion comes first: it is right after a brace that encloses (or
 * precedes) every replaced member.
 */
function build(body: Buffer, at: number, text: string, replace: readonly number[], member: (i: number) => string): Buffer {
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

function skipWs(b: Buffer, i: number): number {
  for (;;) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

/** Index after the closing quote of the string opening at `i`, or FAIL; sets lastEscaped. */
function skipString(b: Buffer, i: number): number {
  const n = b.length;
  lastEscaped = false;
  i++;
  while (i < n) {
    const c = b[i] as number;
    if (c === QUOTE) return i + 1;
    if (c < 0x20) return FAIL;
    if (c !== BACKSLASH) {
      i++;
      continue;
    }
    lastEscaped = true;
    const e = b[i + 1];
    if (e === 0x75) {
      for (let k = 2; k < 6; k++) if (!isHex(b[i + k])) return FAIL;
      i += 6;
    } else if (e === QUOTE || e === BACKSLASH || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
      i += 2;
    } else {
      return FAIL;
    }
  }
  return FAIL;
}

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

function skipDigits(b: Buffer, i: number): number {
  while (isDigit(b[i])) i++;
  return i;
}

function skipNumber(b: Buffer, i: number): number {
  if (b[i] === MINUS) i++;
  if (b[i] === 0x30) i++;
  else if (isDigit(b[i])) i = skipDigits(b, i);
  else return FAIL;
  if (b[i] === 0x2e) {
    if (!isDigit(b[i + 1])) return FAIL;
    i = skipDigits(b, i + 1);
  }
  if (b[i] === 0x65 || b[i] === 0x45) {
    i++;
    if (b[i] === 0x2b || b[i] === MINUS) i++;
    if (!isDigit(b[i])) return FAIL;
    i = skipDigits(b, i);
  }
  return i;
}

/** `true`, `false` or `null` at `i`. */
function skipLiteral(b: Buffer, i: number): number {
  const c = b[i];
  if (c === 0x74) return b[i + 1] === 0x72 && b[i + 2] === 0x75 && b[i + 3] === 0x65 ? i + 4 : FAIL;
  if (c === 0x66) return b[i + 1] === 0x61 && b[i + 2] === 0x6c && b[i + 3] === 0x73 && b[i + 4] === 0x65 ? i + 5 : FAIL;
  if (c === 0x6e) return b[i + 1] === 0x75 && b[i + 2] === 0x6c && b[i + 3] === 0x6c ? i + 4 : FAIL;
  return FAIL;
}

function skipScalar(b: Buffer, i: number): number {
  const c = b[i];
  if (c === QUOTE) return skipString(b, i);
  if (c === MINUS || isDigit(c)) return skipNumber(b, i);
  return skipLiteral(b, i);
}

/** Index after the JSON value starting at `i`, or FAIL; containers are tracked on `stack`. */
function skipValue(b: Buffer, i: number): number {
  let depth = 0;
  for (;;) {
    // At a value.
    const c = b[i];
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === stack.length) {
        const grown = new Uint8Array(depth * 2);
        grown.set(stack);
        stack = grown;
      }
      stack[depth++] = c;
      i = skipWs(b, i + 1);
      if (b[i] === (c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        depth--;
        i++;
      } else {
        if (c === OPEN_OBJECT) {
          i = skipKey(b, i);
          if (i === FAIL) return FAIL;
        }
        continue;
      }
    } else {
      i = skipScalar(b, i);
      if (i === FAIL) return FAIL;
    }
    // After a value: close containers, or move to the next member.
    for (;;) {
      if (depth === 0) return i;
      i = skipWs(b, i);
      const top = stack[depth - 1];
      const d = b[i];
      if (d === COMMA) {
        i = skipWs(b, i + 1);
        if (top === OPEN_OBJECT) {
          i = skipKey(b, i);
          if (i === FAIL) return FAIL;
        }
        break;
      }
      if ((top === OPEN_OBJECT && d === CLOSE_OBJECT) || (top === OPEN_ARRAY && d === CLOSE_ARRAY)) {
        depth--;
        i++;
        continue;
      }
      return FAIL;
    }
  }
}

/** From a member's key to the start of its value. */
function skipKey(b: Buffer, i: number): number {
  if (b[i] !== QUOTE) return FAIL;
  i = skipString(b, i);
  if (i === FAIL) return FAIL;
  i = skipWs(b, i);
  if (b[i] !== COLON) return FAIL;
  return skipWs(b, i + 1);
}
