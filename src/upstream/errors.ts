import type { ErrorId } from '../errors.ts';

const TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** Maps an undici or socket failure to the registry; anything unknown is a 502. */
export function upstreamErrorId(err: unknown): ErrorId {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TIMEOUTS.has(code) ? 'upstream_timeout' : 'upstream_unavailable';
}

/** A short, content-free label for logs: the error code, never its message. */
export function upstreamErrorLabel(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : 'unknown';
}
