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
 * Scanning is iterative, so nesting depth costs heap, never stack.
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

interface Edit {
  readonly at: number;
  /** End of the replaced range; equal to `at` for an insertion. */
  readonly end: number;
  readonly text: string;
}

export function spliceMetaFields(body: Buffer, fields: Readonly<Record<string, string>>): Buffer | undefined {
  const names = Object.keys(fields);
  if (names.length === 0) return body;
  if (!isUtf8(body)) return undefined;
  const edits: Edit[] = [];
  const member = (name: string) => `${JSON.stringify(name)}:${JSON.stringify(fields[name])}`;
  const all = names.map(member).join(',');

  let params = false;
  const top = skipWs(body, 0);
  if (body[top] !== OPEN_OBJECT) return undefined;
  let end = scanObject(body, top, (ks, ke, vs) => {
    if (!keyIs(body, ks, ke, 'params')) return skipValue(body, vs);
    if (params || body[vs] !== OPEN_OBJECT) return FAIL;
    params = true;
    return scanParams(body, vs, names, member, all, edits);
  });
  if (end === FAIL) return undefined;
  end = skipWs(body, end);
  if (end !== body.length) return undefined;
  if (!params) edits.push(insertAfterBrace(body, top, `"params":{"_meta":{${all}}}`));
  return apply(body, edits);
}

function scanParams(body: Buffer, at: number, names: readonly string[], member: (n: string) => string, all: string, edits: Edit[]): number {
  let meta = false;
  const end = scanObject(body, at, (ks, ke, vs) => {
    if (!keyIs(body, ks, ke, '_meta')) return skipValue(body, vs);
    if (meta || body[vs] !== OPEN_OBJECT) return FAIL;
    meta = true;
    return scanMeta(body, vs, names, member, edits);
  });
  if (end !== FAIL && !meta) edits.push(insertAfterBrace(body, at, `"_meta":{${all}}`));
  return end;
}

function scanMeta(body: Buffer, at: number, names: readonly string[], member: (n: string) => string, edits: Edit[]): number {
  const found = new Set<string>();
  const end = scanObject(body, at, (ks, ke, vs) => {
    const ve = skipValue(body, vs);
    if (ve === FAIL) return FAIL;
    for (const name of names) {
      if (!keyIs(body, ks, ke, name)) continue;
      if (found.has(name)) return FAIL;
      found.add(name);
      // Replace the whole member so the value is ours whatever was there.
      edits.push({ at: ks, end: ve, text: member(name) });
    }
    return ve;
  });
  if (end === FAIL) return FAIL;
  const missing = names.filter((n) => !found.has(n));
  if (missing.length > 0) edits.push(insertAfterBrace(body, at, missing.map(member).join(',')));
  return end;
}

/** Inserts members right after an object's `{`, adding a comma when it already has members. */
function insertAfterBrace(body: Buffer, brace: number, members: string): Edit {
  const empty = body[skipWs(body, brace + 1)] === CLOSE_OBJECT;
  return { at: brace + 1, end: brace + 1, text: empty ? members : `${members},` };
}

function apply(body: Buffer, edits: Edit[]): Buffer {
  // At the same offset an insertion (after a brace) precedes a replacement (of the first member).
  edits.sort((a, b) => a.at - b.at || a.end - b.end);
  const parts: Buffer[] = [];
  let from = 0;
  for (const e of edits) {
    parts.push(body.subarray(from, e.at), Buffer.from(e.text, 'utf8'));
    from = e.end;
  }
  parts.push(body.subarray(from));
  return Buffer.concat(parts);
}

/**
 * Walks one object's members: `visit` gets the key's span (quotes included)
 * and the value's start, and returns the value's end or FAIL. Returns the
 * index after the closing brace, or FAIL.
 */
function scanObject(b: Buffer, at: number, visit: (keyStart: number, keyEnd: number, valueStart: number) => number): number {
  let i = skipWs(b, at + 1);
  if (b[i] === CLOSE_OBJECT) return i + 1;
  for (;;) {
    if (b[i] !== QUOTE) return FAIL;
    const ke = skipString(b, i);
    if (ke === FAIL) return FAIL;
    let j = skipWs(b, ke);
    if (b[j] !== COLON) return FAIL;
    j = skipWs(b, j + 1);
    const ve = visit(i, ke, j);
    if (ve === FAIL) return FAIL;
    i = skipWs(b, ve);
    if (b[i] === CLOSE_OBJECT) return i + 1;
    if (b[i] !== COMMA) return FAIL;
    i = skipWs(b, i + 1);
  }
}

function keyIs(b: Buffer, start: number, end: number, name: string): boolean {
  // Fast path for the usual unescaped key; an escaped one is decoded.
  if (b.subarray(start, end).indexOf(BACKSLASH) === -1) {
    return end - start - 2 === Buffer.byteLength(name) && b.toString('utf8', start + 1, end - 1) === name;
  }
  return JSON.parse(b.toString('utf8', start, end)) === name;
}

function skipWs(b: Buffer, i: number): number {
  for (;;) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

/** Index after the closing quote of the string opening at `i`, or FAIL. */
function skipString(b: Buffer, i: number): number {
  const n = b.length;
  i++;
  while (i < n) {
    const c = b[i] as number;
    if (c === QUOTE) return i + 1;
    if (c < 0x20) return FAIL;
    if (c !== BACKSLASH) {
      i++;
      continue;
    }
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

const LITERALS: ReadonlyMap<number, Buffer> = new Map([
  [0x74, Buffer.from('true')],
  [0x66, Buffer.from('false')],
  [0x6e, Buffer.from('null')],
]);

function skipScalar(b: Buffer, i: number): number {
  const c = b[i];
  if (c === QUOTE) return skipString(b, i);
  if (c === MINUS || isDigit(c)) return skipNumber(b, i);
  const literal = c === undefined ? undefined : LITERALS.get(c);
  if (literal === undefined) return FAIL;
  return b.compare(literal, 0, literal.length, i, i + literal.length) === 0 ? i + literal.length : FAIL;
}

/** Index after the JSON value starting at `i`, or FAIL; containers are walked with an explicit stack. */
function skipValue(b: Buffer, i: number): number {
  const stack: number[] = [];
  for (;;) {
    // At a value.
    const c = b[i];
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      stack.push(c);
      i = skipWs(b, i + 1);
      if (b[i] === (c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        stack.pop();
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
      if (stack.length === 0) return i;
      i = skipWs(b, i);
      const top = stack[stack.length - 1];
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
        stack.pop();
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
