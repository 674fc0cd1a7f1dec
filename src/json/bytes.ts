/**
 * A validating JSON scanner over UTF-8 bytes, for the places that edit a
 * body's text instead of parsing it (meta-splice.ts, params-members.ts): each
 * function checks the grammar as it goes and returns the index just past
 * what it read, or FAIL. Nothing is decoded and nothing allocated, and
 * containers are tracked on one reusable stack, so depth costs heap, never
 * call stack.
 */

export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
export const QUOTE = 0x22;
const BACKSLASH = 0x5c;
export const COLON = 0x3a;
export const COMMA = 0x2c;
const MINUS = 0x2d;

export const FAIL = -1;

/** Set by skipString: whether the string it just passed holds an escape (decode it with JSON.parse). */
export let lastEscaped = false;

/** Open containers of skipValue (1 object, 2 array), reused across calls. */
let stack = new Uint8Array(64);
const STACK_KEPT = 4096;

/** Lets go of a stack one deep body grew, once the scan of it is over. */
export function shrinkStack(): void {
  if (stack.length > STACK_KEPT) stack = new Uint8Array(64);
}

export function skipWs(b: Buffer, i: number): number {
  for (;;) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

/** Index after the closing quote of the string opening at `i`, or FAIL; sets lastEscaped. */
export function skipString(b: Buffer, i: number): number {
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
    } else if (
      e === QUOTE ||
      e === BACKSLASH ||
      e === 0x2f ||
      e === 0x62 ||
      e === 0x66 ||
      e === 0x6e ||
      e === 0x72 ||
      e === 0x74
    ) {
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
  if (c === 0x66)
    return b[i + 1] === 0x61 && b[i + 2] === 0x6c && b[i + 3] === 0x73 && b[i + 4] === 0x65 ? i + 5 : FAIL;
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
export function skipValue(b: Buffer, i: number): number {
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
