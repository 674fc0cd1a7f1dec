import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Pool } from 'undici';
import type { ErrorId } from '../errors.ts';
import { clientResponseHeaders } from '../http/headers.ts';
import { sendError, type JsonRpcId } from '../http/jsonrpc.ts';
import { sseStream } from '../telemetry/channels.ts';
import { announceUpstream, withMetaFields, type UpstreamTiming } from './observe.ts';
import { log } from '../telemetry/log.ts';
import { upstreamErrorId, upstreamErrorLabel } from './errors.ts';

export type ForwardOutcome = 'forwarded' | 'client_closed' | ErrorId;

const BODY_LIMIT = 'TOOLGATE_BODY_LIMIT';

function isEventStream(contentType: string | string[] | undefined): boolean {
  return typeof contentType === 'string' && contentType.toLowerCase().startsWith('text/event-stream');
}

/**
 * Sends the request upstream and streams the response back as it arrives:
 * undici writes each chunk straight into the client response and pauses on
 * its backpressure, so SSE events pass through unbuffered. A client that
 * goes away aborts the upstream request.
 */
export async function forward(
  pool: Pool,
  req: IncomingMessage,
  res: ServerResponse,
  requestHeaders: string[],
  body: Buffer | Readable | null,
  rpcId: JsonRpcId,
  headersTimeoutMs?: number,
): Promise<ForwardOutcome> {
  const abort = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) abort.abort();
  };
  res.once('close', onClose);
  let streaming = false;
  const timing: UpstreamTiming | undefined = announceUpstream(req, requestHeaders);
  try {
    await pool.stream(
      {
        path: req.url ?? '/',
        method: req.method as 'GET',
        headers: requestHeaders,
        body: Buffer.isBuffer(body) ? withMetaFields(body, timing) : body,
        signal: abort.signal,
        ...(headersTimeoutMs !== undefined && { headersTimeout: headersTimeoutMs }),
      },
      ({ statusCode, headers }) => {
        res.writeHead(statusCode, clientResponseHeaders(headers));
        timing?.answered(statusCode);
        if (isEventStream(headers['content-type'])) {
          res.flushHeaders();
          streaming = sseStream.hasSubscribers;
          if (streaming) sseStream.publish({ delta: 1 });
        }
        return res;
      },
    );
    timing?.ended();
    return 'forwarded';
  } catch (err) {
    if (abort.signal.aborted) {
      timing?.ended('client_closed');
      return 'client_closed';
    }
    if ((err as { code?: unknown }).code === BODY_LIMIT) {
      timing?.ended('payload_too_large');
      sendError(res, rpcId, 'payload_too_large', undefined, { connection: 'close' });
      return 'payload_too_large';
    }
    const id = upstreamErrorId(err);
    timing?.ended(id);
    log.warn('upstream request failed', { error: upstreamErrorLabel(err), headersSent: res.headersSent });
    sendError(res, rpcId, id);
    return id;
  } finally {
    res.off('close', onClose);
    if (streaming) sseStream.publish({ delta: -1 });
  }
}
