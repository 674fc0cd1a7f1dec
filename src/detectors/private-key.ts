import type { Detector, Range } from './detector.ts';
import { gitleaksSource } from './gitleaks.ts';

const HEADER = /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/g;
const FOOTER = /-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/g;
/** What a cut-off block still shows of its key: base64 lines. */
const BODY = /[A-Za-z0-9+/=\s]*/y;
/** gitleaks' minimum between the armour lines; shorter is a placeholder such as `...`. */
const MIN_BODY = 64;

/**
 * gitleaks' single lazy regex would rescan to the end of the text from every
 * header that has no footer, which is quadratic; finding the footer
 * separately keeps one pass. A block cut off before its footer (a truncated
 * result) still leaks most of the key, so it is redacted through the end of
 * its base64 body.
 */
function find(text: string): Range[] {
  if (!text.includes('-----BEGIN')) return [];
  const ranges: Range[] = [];
  const header = new RegExp(HEADER);
  const footer = new RegExp(FOOTER);
  const body = new RegExp(BODY);
  let footerMissing = false;
  for (let h = header.exec(text); h !== null; h = header.exec(text)) {
    const bodyStart = h.index + h[0].length;
    footer.lastIndex = bodyStart;
    const f = footerMissing ? null : footer.exec(text);
    if (f !== null) {
      if (f.index - bodyStart >= MIN_BODY) ranges.push([h.index, f.index + f[0].length]);
      header.lastIndex = f.index + f[0].length;
      continue;
    }
    // No footer after this header means none after any later one either.
    footerMissing = true;
    body.lastIndex = bodyStart;
    const bodyEnd = bodyStart + (body.exec(text)?.[0].length ?? 0);
    if (text.slice(bodyStart, bodyEnd).trim().length >= MIN_BODY) ranges.push([h.index, bodyEnd]);
    header.lastIndex = Math.max(header.lastIndex, bodyEnd);
  }
  return ranges;
}

export const privateKey: Detector = {
  id: 'private_key',
  summary:
    'PEM private key block, BEGIN through END (or through the end of the base64 body when the END line was cut off)',
  pattern: `${HEADER.source} then at least ${MIN_BODY} characters then ${FOOTER.source}`,
  source: gitleaksSource('private-key'),
  find,
};
