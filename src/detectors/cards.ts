import { luhnValid } from './checksums.ts';
import type { Detector, Range } from './detector.ts';

/**
 * A maximal run of digit groups joined by single spaces or dashes. It may not
 * start right after a word character, a decimal point, a plus sign or a dash
 * (nor after a separator that follows one), so a slice of a longer number,
 * identifier or phone number is never a candidate. At most 19 groups: a
 * longer run is no card. The lookahead (13 characters of digits and
 * separators, the least a card takes) drops the dates, counts and ids of
 * ordinary text before any of them is matched.
 */
const RUN = /(?<![\w.,+-]|\d[ -])(?=[\d -]{13})\d+(?:[ -]\d+){0,18}/g;

/** Issuer (IIN) prefixes of the major schemes with the lengths each issues (ISO/IEC 7812 as the schemes publish it). */
const BRANDS: readonly { readonly name: string; readonly prefix: RegExp; readonly lengths: readonly number[] }[] = [
  { name: 'Visa', prefix: /^4/, lengths: [13, 16, 19] },
  { name: 'Mastercard', prefix: /^(?:5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720)/, lengths: [16] },
  { name: 'American Express', prefix: /^3[47]/, lengths: [15] },
  { name: 'Discover', prefix: /^(?:6011|64[4-9]|65)/, lengths: [16, 17, 18, 19] },
  { name: 'Diners Club', prefix: /^(?:30[0-5]|3095|36|3[89])/, lengths: [14, 15, 16, 17, 18, 19] },
  { name: 'JCB', prefix: /^(?:352[89]|35[3-8]\d)/, lengths: [16, 17, 18, 19] },
  { name: 'UnionPay', prefix: /^62/, lengths: [16, 17, 18, 19] },
];

const MIN_DIGITS = 13;

function isCardNumber(digits: string): boolean {
  return BRANDS.some((b) => b.lengths.includes(digits.length) && b.prefix.test(digits)) && luhnValid(digits);
}

/** Printed groupings: a first group of four, then groups of three to six (4-4-4-4, 4-6-5, 4-6-4, 4-4-4-4-3), one separator throughout. */
function isCardGrouping(groups: readonly string[], separators: ReadonlySet<string>): boolean {
  return (
    groups.length === 1 ||
    (separators.size === 1 && groups[0]!.length === 4 && groups.slice(1).every((g) => g.length >= 3 && g.length <= 6))
  );
}

function endsNumber(text: string, end: number): boolean {
  const next = text[end] ?? '';
  if (/\w/.test(next)) return false;
  // A decimal or thousands separator followed by a digit means the run goes on as one number.
  if ((next === '.' || next === ',' || next === ' ' || next === '-') && /\d/.test(text[end + 1] ?? '')) return false;
  return true;
}

function find(text: string): Range[] {
  const ranges: Range[] = [];
  const run = new RegExp(RUN);
  for (let m = run.exec(text); m !== null; m = run.exec(text)) {
    // Fewer characters than the shortest card has digits: most runs in ordinary text (dates, counts, ids) end here.
    if (m[0].length < MIN_DIGITS) continue;
    const start = m.index;
    const end = start + m[0].length;
    const groups = m[0].split(/[ -]/);
    const digits = groups.join('');
    const separators = new Set(m[0].replace(/\d/g, ''));
    if (endsNumber(text, end) && isCardGrouping(groups, separators) && isCardNumber(digits)) {
      ranges.push([start, end]);
      continue;
    }
    // A list of plain numbers on one line is one run; each long number in it may be a card by itself. Dashes join, so not there.
    if (groups.length === 1 || separators.size !== 1 || !separators.has(' ')) continue;
    let offset = start;
    for (const [i, g] of groups.entries()) {
      const last = i === groups.length - 1;
      if (g.length >= 13 && (!last || endsNumber(text, end)) && isCardNumber(g))
        ranges.push([offset, offset + g.length]);
      offset += g.length + 1;
    }
  }
  return ranges;
}

export const paymentCard: Detector = {
  id: 'payment_card',
  summary:
    'Payment card number (Visa, Mastercard, American Express, Discover, Diners Club, JCB, UnionPay), plain or grouped by spaces or dashes',
  pattern: `13–19 digits, whole or grouped 4-then-3-to-6 by one kind of separator, with a known IIN prefix and length, passing the Luhn check; run: ${RUN.source}`,
  source: 'toolgate; IIN ranges as the card schemes publish them, Luhn (ISO/IEC 7812-1)',
  find,
};
