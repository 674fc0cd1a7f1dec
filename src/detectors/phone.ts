import { COUNTRY_CODES, GENERIC_MIN_NSN, NSN_LENGTHS } from './country-codes.ts';
import type { Detector, Range } from './detector.ts';

/**
 * `+`, then digit groups joined by single spaces or dashes (E.164 written
 * compact, or spaced as E.123 prints it). Not after a word character or `+`,
 * so `x+1` and `a++1` are not numbers. At most 15 groups: E.164 has at most 15 digits.
 */
const RUN = /(?<![\w+])\+\d+(?:[ -]\d+){0,14}/g;
const MAX_DIGITS = 15;
/** North American Numbering Plan: area code and exchange both start 2–9. */
const NANP = /^[2-9]\d{2}[2-9]\d{6}$/;

function countryCode(digits: string): string | undefined {
  return [1, 2, 3].map((n) => digits.slice(0, n)).find((c) => COUNTRY_CODES.has(c));
}

function isPhoneNumber(groups: readonly string[]): boolean {
  const digits = groups.join('');
  if (digits.length > MAX_DIGITS) return false;
  const cc = countryCode(digits);
  // Spaced, the country code stands alone (`+44 20 …`); `+4420 …` is how nobody writes a number.
  if (cc === undefined || (groups.length > 1 && groups[0] !== cc)) return false;
  const nsn = digits.slice(cc.length);
  const [min, max] = NSN_LENGTHS.get(cc) ?? [GENERIC_MIN_NSN, MAX_DIGITS - cc.length];
  if (nsn.length < min || nsn.length > max) return false;
  if (cc === '1') return NANP.test(nsn);
  // The trunk prefix 0 is dropped after a country code; Italy alone keeps it on landlines.
  return cc === '39' || !nsn.startsWith('0');
}

function find(text: string): Range[] {
  const ranges: Range[] = [];
  const run = new RegExp(RUN);
  for (let m = run.exec(text); m !== null; m = run.exec(text)) {
    const next = text[m.index + m[0].length] ?? '';
    // `+1.5` or `+3,000` is a signed quantity, `+14155552671x` an identifier.
    if (/\w/.test(next) || ((next === '.' || next === ',') && /\d/.test(text[m.index + m[0].length + 1] ?? '')))
      continue;
    const groups = m[0].slice(1).split(/[ -]/);
    // Numbers or a year may follow a spaced phone number; the longest valid prefix of its groups is the number.
    for (let n = groups.length; n >= 1; n--) {
      const head = groups.slice(0, n);
      if (isPhoneNumber(head)) {
        ranges.push([m.index, m.index + 1 + head.join(' ').length]);
        break;
      }
    }
  }
  return ranges;
}

export const phone: Detector = {
  id: 'phone',
  summary:
    "Phone number in international form: `+`, a valid country code, and a national number of that country's length (15 digits at most)",
  pattern: `${RUN.source}; country code from the ITU-T E.164 list; national number length by country (NANP: [2-9]XX[2-9]XXXXXX), no trunk 0`,
  source: 'toolgate; ITU-T E.164 country codes and national numbering plans',
  find,
};
