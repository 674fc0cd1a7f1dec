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
