import type { Detector, Range } from './detector.ts';

/** RFC 5322 atext without the characters that more often join an address to its surroundings: `/`, `=`, `&`, `'`, `|`, braces and backquote. */
const LOCAL_CHAR = /[A-Za-z0-9._%+~!#$*^-]/;
const DOMAIN_CHAR = /[A-Za-z0-9.-]/;
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
/** A top-level domain is letters, or an IDN in its xn-- form; a numeric one is a version (`pkg@1.2.3`). */
const TLD = /^(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$/;
const MAX_LOCAL = 64;
const MAX_DOMAIN = 253;

/**
 * Scanned outward from each `@` with RFC 5321's length limits as bounds, so
 * no character is examined more than a fixed number of times; a regex for
 * `local@domain` retries its unbounded local part from every start instead.
 */
function find(text: string): Range[] {
  const ranges: Range[] = [];
  let lastEnd = 0;
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > lastEnd && at - start <= MAX_LOCAL && LOCAL_CHAR.test(text[start - 1]!)) start--;
    const local = text.slice(start, at);
    if (local.length === 0 || local.length > MAX_LOCAL) continue;
    if (local.startsWith('.') || local.endsWith('.') || local.includes('..')) continue;
    let end = at + 1;
    while (end < text.length && end - at <= MAX_DOMAIN + 1 && DOMAIN_CHAR.test(text[end]!)) end++;
    // A full stop after the domain ends the sentence, not the address.
    while (text[end - 1] === '.' || text[end - 1] === '-') end--;
    const domain = text.slice(at + 1, end);
    if (domain.length > MAX_DOMAIN || /[\w@]/.test(text[end] ?? '')) continue;
    const labels = domain.split('.');
    if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || !TLD.test(labels.at(-1)!)) continue;
    ranges.push([start, end]);
    lastEnd = end;
    at = end - 1;
  }
  return ranges;
}

export const email: Detector = {
  id: 'email',
  summary: 'E-mail address with a dotted domain (not `user@localhost`, not `pkg@1.2.3`)',
  pattern:
    'local part [A-Za-z0-9._%+~!#$*^-]{1,64} (no leading, trailing or double dot) @ two or more DNS labels, the last alphabetic or xn--',
  source: 'toolgate; limits from RFC 5321, dot-atom subset of RFC 5322',
  find,
};
