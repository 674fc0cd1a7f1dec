import type { IncomingMessage, ServerResponse } from 'node:http';
import { classify, type Classified, type McpHeaders } from '../../mcp/classify.ts';
import { sendError } from '../../mcp/jsonrpc.ts';
import { requestClassified } from '../../telemetry/channels.ts';
import type { Outcome } from '../outcome.ts';
import { readBody, type BodyResult } from './body.ts';

export type Read =
  | { readonly ok: true; readonly body: Buffer; readonly message: Classified }
  | { readonly ok: false; readonly outcome: Outcome };

/**
 * Reads the POST body within the size limit and classifies the one JSON-RPC
 * message it holds, headers checked against the body. Every failure has
 * already been answered when this returns.
 */
export function readMessage(req: IncomingMessage, res: ServerResponse, maxBodyBytes: number): Promise<Read> {
  // One promise from the socket to the classified message: every POST in policy mode comes this way.
  return readBody(req, res, maxBodyBytes).then((read) =>
    read.ok ? classified(req, res, read.body) : unread(res, read),
  );
}

function classified(req: IncomingMessage, res: ServerResponse, body: Buffer): Read {
  const c = classify(mcpHeaders(req), body);
  if (!c.ok) {
    sendError(res, c.id, c.code);
    return { ok: false, outcome: c.code };
  }
  if (requestClassified.hasSubscribers) requestClassified.publish({ request: req, message: c });
  return { ok: true, body, message: c };
}

/** The request's MCP headers; repeated ones were refused before (repeated-fields.ts). */
export function mcpHeaders(req: IncomingMessage): McpHeaders {
  const h = req.headers;
  return {
    protocolVersion: h['mcp-protocol-version'] as string | undefined,
    method: h['mcp-method'] as string | undefined,
    name: h['mcp-name'] as string | undefined,
  };
}

/** The POST body within the size limit, unread as JSON; a body over it has been answered. */
export function readBodyWithin(
  req: IncomingMessage,
  res: ServerResponse,
  maxBodyBytes: number,
): Promise<{ readonly ok: true; readonly body: Buffer } | { readonly ok: false; readonly outcome: Outcome }> {
  return readBody(req, res, maxBodyBytes).then((read) => (read.ok ? read : unread(res, read)));
}

/** Answers a body that was not read whole: too large (the connection closes), or cut short. */
function unread(
  res: ServerResponse,
  read: Exclude<BodyResult, { ok: true }>,
): { readonly ok: false; readonly outcome: Outcome } {
  if (read.code === 'payload_too_large') sendError(res, null, 'payload_too_large', undefined, { connection: 'close' });
  return { ok: false, outcome: read.code };
}
