/**
 * A failed operation on toolgate's own link to the upstream, named by a
 * closed code (`http_503`, `jsonrpc_-32601`, `malformed_reply` …). It never
 * carries text from the upstream, which may quote anything.
 */
export class LinkError extends Error {
  readonly code: string;
  constructor(code: string) {
    super(code);
    this.name = 'LinkError';
    this.code = code;
  }
}

/**
 * A closed code for a failed link operation, safe to log: it carries no
 * message text, which may quote the upstream.
 */
export function failureCode(e: unknown): string {
  if (e instanceof LinkError) return e.code;
  const errno = socketErrorCode(e);
  if (errno !== undefined) return `net_${errno.toLowerCase()}`;
  if (e instanceof Error && e.name === 'TimeoutError') return 'request_timeout';
  if (e instanceof Error && e.name === 'AbortError') return 'aborted';
  return 'connect_failed';
}

/**
 * The socket error (ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET …) behind an
 * error, directly or in its `cause` chain: the most useful thing an operator
 * can be told when the upstream is down.
 */
function socketErrorCode(e: unknown): string | undefined {
  let node: unknown = e;
  for (let depth = 0; depth < 6 && typeof node === 'object' && node !== null; depth++) {
    const { code, cause } = node as { code?: unknown; cause?: unknown };
    if (typeof code === 'string' && /^(E[A-Z0-9_]{2,30}|UND_ERR_[A-Z_]{2,30})$/.test(code)) return code;
    node = cause;
  }
  return undefined;
}
