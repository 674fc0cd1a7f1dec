/**
 * Splits free text and identifiers into lower-case word tokens. Tool names glue
 * words together in every convention (getStockPrice, get_stock_price,
 * get-stock-price, stock.price, HTTPServer, AI2sql), so case changes and
 * letter/digit changes are word boundaries too. Scripts written without spaces
 * (Han, kana, Hangul) become overlapping character pairs, the usual way to make
 * them matchable without a dictionary.
 */

/** A run of letters, combining marks and digits; everything else separates. */
const RUN = /[\p{L}\p{M}\p{N}]+/gu;
/** Inside a run: an upper-case stretch, a capitalised or lower-case word, or digits. */
const PART = /\p{Lu}+(?![\p{Ll}\p{M}])|\p{Lu}[\p{Ll}\p{M}]*|[\p{Ll}\p{Lo}\p{Lt}\p{Lm}\p{M}]+|\p{N}+/gu;
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const LATIN_ACCENTED = /[\u00C0-\u024F]/;
const MARKS = /\p{M}/gu;

// oxlint-disable-next-line no-control-regex -- the class is all of ASCII, NUL included by design
const ASCII = /^[\x00-\x7f]*$/;

/** ASCII is already in normal form; skipping it keeps index builds fast. */
function nfkc(text: string): string {
  return ASCII.test(text) ? text : text.normalize('NFKC');
}

/** "café" and "cafe" are one word to a searcher; only Latin letters are folded. */
function fold(word: string): string {
  return LATIN_ACCENTED.test(word) ? word.normalize('NFKD').replace(MARKS, '') : word;
}

function unspacedPairs(run: string, out: string[]): void {
  const chars = Array.from(run);
  if (chars.length === 1) {
    out.push(chars[0] as string);
    return;
  }
  for (let i = 0; i + 1 < chars.length; i++) out.push((chars[i] as string) + (chars[i + 1] as string));
}

/** 0 separator, 1 upper, 2 lower, 3 digit. */
function asciiClass(c: number): number {
  if (c >= 97 && c <= 122) return 2;
  if (c >= 65 && c <= 90) return 1;
  if (c >= 48 && c <= 57) return 3;
  return 0;
}

/**
 * The same splitting for plain ASCII, which most catalogues are, as one pass
 * over char codes: several times faster than the Unicode-aware expressions.
 */
function tokenizeAscii(text: string): string[] {
  const out: string[] = [];
  let start = -1;
  let prev = 0;
  for (let i = 0; i <= text.length; i++) {
    const cls = i < text.length ? asciiClass(text.charCodeAt(i)) : 0;
    if (cls === 0) {
      if (start >= 0) out.push(text.slice(start, i).toLowerCase());
      start = -1;
    } else if (start < 0) {
      start = i;
    } else if (
      (prev === 3) !== (cls === 3) ||
      (prev === 2 && cls === 1) ||
      (prev === 1 && cls === 1 && i + 1 < text.length && asciiClass(text.charCodeAt(i + 1)) === 2)
    ) {
      out.push(text.slice(start, i).toLowerCase());
      start = i;
    }
    prev = cls;
  }
  return out;
}

/** Word tokens of a text in order, lower-cased; identifiers split into their words. */
export function tokenize(text: string): string[] {
  if (ASCII.test(text)) return tokenizeAscii(text);
  const out: string[] = [];
  for (const m of text.normalize('NFKC').matchAll(RUN)) {
    const run = m[0];
    if (UNSPACED.test(run)) {
      unspacedPairs(run.toLowerCase(), out);
      continue;
    }
    for (const p of run.matchAll(PART)) out.push(fold(p[0].toLowerCase()));
  }
  return out;
}

/**
 * The glued forms of an identifier: the whole name and each delimiter-separated
 * segment, lower-cased, without separators ("ChatOCR" → "chatocr"), so a query
 * that spells the name as one word still meets it.
 */
export function compounds(name: string): string[] {
  const out = new Set<string>();
  const whole: string[] = [];
  for (const m of nfkc(name).matchAll(RUN)) {
    const seg = fold(m[0].toLowerCase());
    whole.push(seg);
    if (!UNSPACED.test(seg)) out.add(seg);
  }
  const joined = whole.join('');
  if (whole.length > 1 && !UNSPACED.test(joined)) out.add(joined);
  return [...out];
}
