import { ibanChecksumValid } from './checksums.ts';
import type { Detector, Range } from './detector.ts';
import { IBAN_LENGTHS } from './iban-lengths.ts';

/**
 * A candidate: country code, check digits, then 11 to 29 characters (the
 * registry's shortest and longest BBAN), each optionally after one space.
 * Bounded, so a start costs at most 60 characters; where the IBAN really ends
 * depends on the country and is decided in code.
 */
const CANDIDATE = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,29}/g;

/** The end offset in text of an IBAN of `length` characters starting the candidate, or -1 if the spacing is not the paper format. */
function ibanEnd(candidate: string, length: number): number {
  let seen = 0;
  for (let i = 0; i < candidate.length; i++) {
    if (candidate[i] === ' ') {
      // Paper format (ISO 13616): groups of four, so a space may only follow every fourth character.
      if (seen % 4 !== 0 || candidate[i - 1] === ' ') return -1;
      continue;
    }
    seen++;
    if (seen === length) return i + 1;
  }
  return -1;
}

function find(text: string): Range[] {
  const ranges: Range[] = [];
  const re = new RegExp(CANDIDATE);
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const length = IBAN_LENGTHS.get(m[0].slice(0, 2));
    const end = length === undefined ? -1 : ibanEnd(m[0], length);
    const iban = m[0].slice(0, end).replaceAll(' ', '');
    if (end !== -1 && !/[A-Za-z0-9]/.test(text[m.index + end] ?? '') && ibanChecksumValid(iban)) {
      ranges.push([m.index, m.index + end]);
      re.lastIndex = m.index + end;
    } else {
      // The candidate may have run into a real IBAN that starts after one of its spaces.
      re.lastIndex = m.index + 1;
    }
  }
  return ranges;
}

export const iban: Detector = {
  id: 'iban',
  summary: 'International bank account number (IBAN), compact or in groups of four',
  pattern: `country code, 2 check digits, BBAN of that country's registered length; spaces only between groups of four; ISO 7064 mod-97 = 1; candidate: ${CANDIDATE.source}`,
  source: 'toolgate; lengths from the SWIFT IBAN Registry, checksum ISO 13616 / ISO 7064',
  find,
};
