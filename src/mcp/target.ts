/**
 * Where a request goes, read from its request target: the MCP endpoint (where
 * policy applies), another path, or nowhere. Servers route the same target
 * differently: Express matches paths without regard to case or a trailing
 * slash and reads absolute-form targets, servlet containers drop `;params`,
 * some decode `%2F`. A target toolgate took for "another path" while the
 * server routes it to its MCP handler would skip every check, so targets are
 * normalised (RFC 3986 §6.2.2: dot segments removed, percent-encoded
 * unreserved characters decoded, repeated slashes merged; absolute-form
 * reduced to its path), the MCP path is matched the way the most lenient of
 * those routers would, and forms routers disagree on (an encoded `/`, `\` or
 * `.`, a raw `\`, a malformed escape) are refused. Pure: it never throws.
 */

export type Route =
  | {
      readonly ok: true;
      readonly kind: 'mcp' | 'other';
      /** The path and query to send upstream: the configured MCP path for the endpoint, else the normalised target. */
      readonly target: string;
      /** The normalised path, without the query. */
      readonly path: string;
    }
  | { readonly ok: false; readonly code: 'invalid_path' };

const INVALID: Route = Object.freeze({ ok: false, code: 'invalid_path' });
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;
const AMBIGUOUS = /\\|%(?:2f|5c|2e)|#/i;
const ESCAPE = /%([0-9A-Fa-f]{2})?/g;
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * The router for one MCP path. The target a client normally sends, the MCP
 * path itself, takes one string comparison.
 */
export function targetRouter(mcpPath: string): (url: string) => Route {
  const mcpKey = comparable(normalisePath(mcpPath) ?? mcpPath);
  const exact: Route = Object.freeze({ ok: true, kind: 'mcp', target: mcpPath, path: mcpPath });
  return (url) => (url === mcpPath ? exact : routeTarget(url, mcpKey, mcpPath));
}

function routeTarget(url: string, mcpKey: string, mcpPath: string): Route {
  let rest = url;
  const absolute = ABSOLUTE_FORM.exec(rest);
  if (absolute !== null) {
    rest = rest.slice(absolute[0].length);
    if (!rest.startsWith('/')) rest = `/${rest}`;
  }
  const q = rest.indexOf('?');
  const rawPath = q === -1 ? rest : rest.slice(0, q);
  const query = q === -1 ? '' : rest.slice(q);
  if (!rawPath.startsWith('/') || AMBIGUOUS.test(rawPath)) return INVALID;
  const path = normalisePath(rawPath);
  if (path === undefined) return INVALID;
  if (comparable(path) === mcpKey) return { ok: true, kind: 'mcp', target: mcpPath + query, path: mcpPath };
  return { ok: true, kind: 'other', target: path + query, path };
}

/**
 * A comma-separated list of pass-through prefixes: absolute paths in plain
 * form (no dot segments, repeated slashes or escapes), so they compare with
 * normalised paths as written. Empty text is an empty list; undefined when any
 * entry is not plain.
 */
export function parsePrefixes(text: string): readonly string[] | undefined {
  const prefixes = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  return prefixes.every(plain) ? Object.freeze(prefixes) : undefined;
}

function plain(p: string): boolean {
  return /^\/[A-Za-z0-9._~!$&'()*+;=:@/-]{0,1023}$/.test(p) && !/\/\/|(^|\/)\.{1,2}(\/|$)/.test(p);
}

/** Whether `path` (normalised) is `prefix` or below it; `prefix` ending in `/` names only what is below. */
export function underPrefix(path: string, prefix: string): boolean {
  if (prefix.endsWith('/')) return path.startsWith(prefix);
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** Escapes decoded where unreserved and upper-cased elsewhere, dot segments and empty segments removed; undefined for a malformed escape. */
function normalisePath(raw: string): string | undefined {
  let malformed = false;
  const decoded = raw.replace(ESCAPE, (escape, hex: string | undefined) => {
    if (hex === undefined) {
      malformed = true;
      return escape;
    }
    const c = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(c) ? c : `%${hex.toUpperCase()}`;
  });
  if (malformed) return undefined;
  const segments: string[] = [];
  for (const s of decoded.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') segments.pop();
    else segments.push(s);
  }
  const trailing = segments.length > 0 && /\/\.{0,2}$/.test(decoded);
  return `/${segments.join('/')}${trailing ? '/' : ''}`;
}

/** How lenient routers compare: case-folded, `;params` dropped from every segment, no trailing slash. */
function comparable(path: string): string {
  const key = path
    .toLowerCase()
    .split('/')
    .map((s) => {
      const semi = s.indexOf(';');
      return semi === -1 ? s : s.slice(0, semi);
    })
    .join('/');
  return key.length > 1 && key.endsWith('/') ? key.slice(0, -1) : key;
}
