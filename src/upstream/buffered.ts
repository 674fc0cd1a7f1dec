import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Pool } from 'undici';
import { clientResponseHeaders } from '../mcp/headers.ts';
import { log } from '../telemetry/log.ts';
import { upstreamErrorId, upstreamErrorLabel } from './errors.ts';
import type { ErrorId } from '../errors.ts';
import { announceUpstream, withMetaFields } from './observe.ts';
import { bodyIdleMs } from './pool.ts';

export type Buffered =
  | {
      readonly ok: true;
      readonly status: number;
      readonly headers: Record<string, string | string[] | undefined>;
      readonly body: Buffer;
    }
  | { readonly ok: false; readonly error: ErrorId | 'client_closed' };

/**
 * Sends the request upstream and reads the whole response, for the few
 * responses toolgate must rewrite (tools/list). Bounded: a response larger
 * than `maxBytes` cannot be checked, so it is refused, never passed unfiltered.
 */
export async function requestBuffered(
  pool: Pool,
  req: IncomingMessage,
  res: ServerResponse,
  requestHeaders: string[],
  body: Buffer,
  maxBytes: number,
): Promise<Buffered> {
  // Gone while the request waited: its 'close' has fired and would never abort this one.
  if (res.destroyed) return { ok: false, error: 'client_closed' };
  const abort = new AbortController();
  const onClose = () => abort.abort();
  res.once('close', onClose);
  const timing = announceUpstream(req, requestHeaders);
  try {
    const up = await pool.request({
      path: req.url ?? '/',
      method: 'POST',
      headers: requestHeaders,
      body: withMetaFields(body, timing),
      signal: abort.signal,
      bodyTimeout: bodyIdleMs(pool),
    });
    timing?.answered(up.statusCode);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of up.body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        up.body.destroy();
        log.warn('upstream response too large to rewrite', { bytes: size, limit: maxBytes });
        timing?.ended('upstream_unavailable');
        return { ok: false, error: 'upstream_unavailable' };
      }
      chunks.push(chunk as Buffer);
    }
    timing?.ended();
    return { ok: true, status: up.statusCode, headers: up.headers, body: Buffer.concat(chunks, size) };
  } catch (err) {
    if (abort.signal.aborted) {
      timing?.ended('client_closed');
      return { ok: false, error: 'client_closed' };
    }
    log.warn('upstream request failed', { error: upstreamErrorLabel(err) });
    const error = upstreamErrorId(err);
    timing?.ended(error);
    return { ok: false, error };
  } finally {
    res.off('close', onClose);
  }
}

/** Writes a response toolgate holds whole (buffered, rewritten or judged): the upstream's headers with a length for this body. */
export function writeWhole(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | string[] | undefined>,
  body: Buffer,
): void {
  const out = clientResponseHeaders(headers);
  delete out['content-length'];
  res.writeHead(status, { ...out, 'content-length': String(body.length) });
  res.end(body);
}
