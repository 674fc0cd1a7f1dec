import { isRecord } from '../json/record.ts';
import type { Detector, Range } from './detector.ts';
import { gitleaksSource } from './gitleaks.ts';

const PART = /[A-Za-z0-9_-]*/y;
const BEFORE = /[\w.-]/;

function partEnd(text: string, from: number): number {
  const part = new RegExp(PART);
  part.lastIndex = from;
  return from + (part.exec(text)?.[0].length ?? 0);
}

/** A JOSE header: base64url of a JSON object naming its algorithm. */
function isJoseHeader(part: string): boolean {
  // Length 1 mod 4 is not base64 at all; Buffer would quietly drop the last character.
  if (part.length % 4 === 1) return false;
  try {
    const header: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return isRecord(header) && typeof header.alg === 'string';
  } catch {
    return false;
  }
}

/**
 * Scanned by hand rather than with gitleaks' regex, whose unbounded parts
 * can rescan a long dotted run from many starts. Each base64url run is read
 * a bounded number of times, so the scan is linear.
 */
function find(text: string): Range[] {
  const ranges: Range[] = [];
  for (let i = text.indexOf('ey'); i !== -1; i = text.indexOf('ey', i + 2)) {
    if (i > 0 && BEFORE.test(text[i - 1]!)) continue;
    const headerEnd = partEnd(text, i);
    if (text[headerEnd] !== '.' || !text.startsWith('ey', headerEnd + 1)) continue;
    const payloadEnd = partEnd(text, headerEnd + 1);
    if (text[payloadEnd] !== '.') continue;
    const end = partEnd(text, payloadEnd + 1);
    // A fourth part makes it a JWE or something else dotted; a lone trailing dot ends a sentence.
    if (text[end] === '.' && /[A-Za-z0-9_-]/.test(text[end + 1] ?? '')) continue;
    if (!isJoseHeader(text.slice(i, headerEnd))) continue;
    ranges.push([i, end]);
    i = end - 2;
  }
  return ranges;
}

export const jwt: Detector = {
  id: 'jwt',
  summary: 'JSON Web Token (JWS compact form): header, claims and signature',
  pattern: 'ey… . ey… . [signature], each part base64url; the header must decode to a JSON object with a string alg',
  source: `${gitleaksSource('jwt')}, with the header decoded`,
  find,
};
