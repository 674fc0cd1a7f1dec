/**
 * Resource URIs as toolgate decides on them. Rather than normalise a URI and
 * forward bytes the server may read differently, toolgate accepts only URIs
 * already in one normal form (RFC 3986 §6.2.2) and compares them byte for
 * byte, so toolgate and the server always judge the same string:
 *
 * - visible ASCII only: no space, control or non-ASCII character (send them
 *   percent-encoded), none of `"<>\^`{|}`;
 * - a lower-case scheme, and no upper-case letter in the authority;
 * - percent escapes with upper-case hex digits, never of an unreserved
 *   character (`%41` must be written `A`);
 * - no `.` or `..` path segment, also when written percent-encoded or
 *   separated by `%2F` or `%5C`: a server that decodes before it resolves
 *   would otherwise read `docs/%2E%2E/secret` as `secret`.
 *
 * Paths stay case-sensitive: with default deny a case variant matches no
 * allow row and is refused, but a deny row inside an allowed prefix only
 * catches the case it names (see docs/policy.md).
 */

/** Longest resource URI toolgate decides on. */
export const MAX_URI_LENGTH = 4096;

const SCHEME = /^[a-z][a-z0-9+.-]*:/;
/** Visible ASCII minus the characters RFC 3986 never allows unescaped. */
const URI_CHARS = /^[!#-;=?-[\]_a-z~]*$/;
const UNRESERVED = /[A-Za-z0-9\-._~]/;
const HEX = /^[0-9A-F]{2}$/;
const UPPER = /[A-Z]/;

/** Why a URI is not in toolgate's normal form, or undefined when it is. */
export function uriProblem(uri: string): string | undefined {
  if (uri.length === 0 || uri.length > MAX_URI_LENGTH) return `must be 1 to ${MAX_URI_LENGTH} characters`;
  if (!URI_CHARS.test(uri))
    return 'holds a character a URI must percent-encode (space, control, non-ASCII, or one of "<>\\^`{|})';
  const scheme = SCHEME.exec(uri);
  if (scheme === null) return 'must start with a lower-case scheme followed by ":"';
  for (let i = uri.indexOf('%'); i !== -1; i = uri.indexOf('%', i + 1)) {
    const hex = uri.slice(i + 1, i + 3);
    if (!HEX.test(hex)) return 'holds a percent escape that is not "%" and two upper-case hex digits';
    if (UNRESERVED.test(String.fromCharCode(Number.parseInt(hex, 16))))
      return 'percent-encodes an unreserved character; write it as itself';
  }
  const rest = uri.slice(scheme[0].length);
  const authorityEnd = rest.startsWith('//') ? endOf(rest, 2) : 0;
  if (UPPER.test(rest.slice(0, authorityEnd))) return 'has an upper-case letter in its authority';
  const path = rest.slice(authorityEnd, endOf(rest, authorityEnd, '?#'));
  if (hasDotSegment(path)) return 'has a dot segment ("." or "..") in its path';
  return undefined;
}

/** Where the component starting at `from` ends: at the first of `stops`, or the end. */
function endOf(text: string, from: number, stops = '/?#'): number {
  for (let i = from; i < text.length; i++) if (stops.includes(text[i] as string)) return i;
  return text.length;
}

function hasDotSegment(path: string): boolean {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // Escapes that are not UTF-8: judged on the escaped form, where "%2E" cannot hide a dot.
    decoded = path;
  }
  return decoded.split(/[/\\]/).some((s) => s === '.' || s === '..');
}

/**
 * Whether `uri` is `prefix` or continues it at a boundary: anything after a
 * prefix ending in `/`, otherwise only a `/`, `?` or `#` next, so
 * `file:///docs` covers `file:///docs/a` but never `file:///docs-secret`.
 */
export function underUriPrefix(uri: string, prefix: string): boolean {
  if (!uri.startsWith(prefix)) return false;
  if (uri.length === prefix.length || prefix.endsWith('/')) return true;
  const next = uri[prefix.length] as string;
  return next === '/' || next === '?' || next === '#';
}

/**
 * The literal text of a URI template (RFC 6570) before its first expression:
 * every URI the template expands to starts with it. The whole template when
 * it has no expression.
 */
export function templatePrefix(template: string): string {
  const at = template.indexOf('{');
  return at === -1 ? template : template.slice(0, at);
}
