/**
 * Pieces shared by the body scanners (duplicate-keys.ts, inexact-integers.ts),
 * which walk text JSON.parse has already accepted: only strings need care,
 * since brackets, commas and digits inside them are not structure.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Index just past the string literal whose opening quote is at `start`. */
export function stringEnd(text: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    i += c === BACKSLASH ? 2 : 1;
  }
}

/** The decoded value of the string literal `text[start, end)`. */
export function stringValue(text: string, start: number, end: number): string {
  const raw = text.slice(start + 1, end - 1);
  return raw.includes('\\') ? (JSON.parse(text.slice(start, end)) as string) : raw;
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
