import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Pool } from 'undici';
import { sendError, type JsonRpcId } from '../../mcp/jsonrpc.ts';
import { forward, type ForwardOptions, type ForwardOutcome } from '../../upstream/forward.ts';
import { BodyLimit, continueIfExpected, declaredTooLarge } from './body.ts';

export type PassThrough = (
  req: IncomingMessage,
  res: ServerResponse,
  rpcId: JsonRpcId,
  headers: string[],
  options?: ForwardOptions,
) => Promise<ForwardOutcome>;

/**
 * Forwards a request whose body toolgate does not read (session operations,
 * other paths): the body streams through unchanged, cut at the size limit.
 */
export function passThrough(pool: Pool, maxBodyBytes: number): PassThrough {
  return (req, res, rpcId, headers, options = {}) => {
    if (declaredTooLarge(req, maxBodyBytes)) {
      sendError(res, rpcId, 'payload_too_large', undefined, { connection: 'close' });
      return Promise.resolve('payload_too_large');
    }
    const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    if (hasBody) continueIfExpected(req, res);
    const body = hasBody ? req.pipe(new BodyLimit(maxBodyBytes)) : null;
    return forward(pool, { req, res, headers, body, rpcId }, options);
  };
}
