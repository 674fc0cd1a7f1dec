/**
 * Pieces shared by the body scanners (duplicate-keys.ts, inexact-integers.ts),
 * which walk text JSON.parse has already accepted: only strings need care,
 * since brackets, commas and digits inside them are not structure.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Index just past the string literal whose opening quote is at `start`. */
export function stringEnd(text: string, start: number): number {
  // indexOf skips the characters of a string natively; a quote is its end
  // unless an odd run of backslashes escapes it.
  let quote = text.indexOf('"', start + 1);
  while (quote !== -1 && escaped(text, quote)) quote = text.indexOf('"', quote + 1);
  // Unterminated (never so in text JSON.parse accepted): the string runs to the end, and so does every scan.
  return quote === -1 ? text.length : quote + 1;
}

function escaped(text: string, quote: number): boolean {
  let i = quote - 1;
  while (text.charCodeAt(i) === BACKSLASH) i--;
  return (quote - 1 - i) % 2 === 1;
}

/** The decoded value of the string literal `text[start, end)`. */
export function stringValue(text: string, start: number, end: number): string {
  const raw = text.slice(start + 1, end - 1);
  return raw.includes('\\') ? (JSON.parse(text.slice(start, end)) as string) : raw;
}

/**
 * How many member names the objects of a JSON text hold, all together,
 * repeats included. In valid JSON a string is a member name exactly when a
 * colon follows it, so no nesting needs tracking: the scan goes from quote to
 * quote.
 */
export function memberNameCount(text: string): number {
  let names = 0;
  for (let quote = text.indexOf('"'); quote !== -1;) {
    let next = stringEnd(text, quote);
    while (isWhitespace(text.charCodeAt(next))) next++;
    if (text.charCodeAt(next) === COLON) names++;
    quote = text.indexOf('"', next);
  }
  return names;
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * Whether objects and arrays nest more than `limit` deep. Unlike the
 * scanners above it runs before JSON.parse, so any text is safe: an
 * unterminated string just ends the scan.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  const n = text.length;
  let depth = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
