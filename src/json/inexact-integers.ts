import { childPointer } from './pointer.ts';
import { stringEnd, stringValue } from './scan.ts';

/**
 * Where a JSON text holds an integer literal that a double cannot hold
 * exactly: JSON.parse reads 9007199254740993 as 9007199254740992, while
 * servers in Python, or Go and Java decoding into 64-bit or big integers,
 * read the digits as written. A schema that compares values (`maximum`,
 * `const`, `enum`, …) would then pass a number the server reads as another.
 *
 * Only literals under `within` (a path of member names and array indexes from
 * the root) count; the answer is the JSON pointer of the first one relative
 * to `within`, or undefined. Literals with a fraction or an exponent are left
 * alone: every parser reads those as the same nearest double.
 *
 * `text` must already be valid JSON (JSON.parse accepted it): the scan only
 * tracks strings, nesting and literals, in one pass, and never throws.
 */
export function findInexactInteger(text: string, within: readonly (string | number)[]): string | undefined {
  // An integer of at most 15 digits is below 2^53, where every integer is a double.
  if (!SIXTEEN_DIGITS.test(text)) return undefined;
  // One entry per open container: the member name or element index being read.
  const path: (string | number)[] = [];
  const inArray: boolean[] = [];
  let expectName = false;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (expectName) {
        path[path.length - 1] = stringValue(text, i, end);
        expectName = false;
      }
      i = end;
      continue;
    }
    if (c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9)) {
      const start = i;
      let digits = c === MINUS ? 0 : 1;
      let integer = true;
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d >= DIGIT_0 && d <= DIGIT_9) digits++;
        else if (d === DOT || d === LOWER_E || d === UPPER_E || d === PLUS || d === MINUS) integer = false;
        else break;
      }
      if (integer && digits >= 16 && isInexact(text.slice(start, i))) {
        const pointer = relativePointer(path, within);
        if (pointer !== undefined) return pointer;
      }
      continue;
    }
    if (c === OPEN_BRACE) {
      path.push('');
      inArray.push(false);
      expectName = true;
    } else if (c === OPEN_BRACKET) {
      path.push(0);
      inArray.push(true);
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      path.pop();
      inArray.pop();
    } else if (c === COMMA) {
      const last = path.length - 1;
      if (inArray[last] === true) path[last] = (path[last] as number) + 1;
      else expectName = true;
    }
    i++;
  }
  return undefined;
}

/**
 * Whether `value` (what JSON.parse made of a text) holds a number of
 * magnitude 2^53 or more. Every integer literal JSON.parse could not read
 * exactly became one: it is 2^53 or more itself, and rounding to the nearest
 * double never takes it below 2^53, which a double holds. So where this is
 * false, findInexactInteger on the same text finds nothing, and the text
 * need not be scanned.
 */
export function holdsUnsafeMagnitude(value: unknown): boolean {
  if (typeof value === 'number') return Math.abs(value) >= TWO_TO_53;
  if (typeof value !== 'object' || value === null) return false;
  // Only containers wait their turn: a number is judged where it is found, a string passed over.
  const pending: object[] = [value];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (Array.isArray(next)) {
      for (const item of next) if (holdsUnsafeNumber(item, pending)) return true;
    } else {
      for (const key in next) if (holdsUnsafeNumber((next as Record<string, unknown>)[key], pending)) return true;
    }
  }
  return false;
}

/** Whether `item` is an unsafe number; a container goes on `pending` instead. */
function holdsUnsafeNumber(item: unknown, pending: object[]): boolean {
  if (typeof item === 'number') return Math.abs(item) >= TWO_TO_53;
  if (typeof item === 'object' && item !== null) pending.push(item);
  return false;
}

function isInexact(literal: string): boolean {
  const value = Number(literal);
  // Below 2^53 every integer is a double, so the literal was read exactly.
  if (Math.abs(value) < TWO_TO_53) return false;
  return !Number.isFinite(value) || BigInt(value) !== BigInt(literal);
}

function relativePointer(path: readonly (string | number)[], within: readonly (string | number)[]): string | undefined {
  if (path.length < within.length) return undefined;
  for (let k = 0; k < within.length; k++) if (path[k] !== within[k]) return undefined;
  let pointer = '';
  for (let k = within.length; k < path.length; k++) pointer = childPointer(pointer, path[k] as string | number);
  return pointer;
}

const SIXTEEN_DIGITS = /\d{16}/;
const TWO_TO_53 = 2 ** 53;
const QUOTE = 0x22;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
