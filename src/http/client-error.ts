import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { errors, type ErrorId } from '../errors.ts';
import { errorBody } from '../mcp/jsonrpc.ts';
import { requestEnd } from '../telemetry/channels.ts';

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/**
 * Requests Node rejects before a handler runs (oversized or malformed heads)
 * still get a registry error as JSON, not Node's bare status line.
 */
export function installClientErrorHandler(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const id: ErrorId =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? 'headers_too_large'
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? 'request_timeout'
          : 'invalid_request';
    const e = errors[id];
    const body = errorBody(null, id);
    socket.end(
      `HTTP/1.1 ${e.status} ${STATUS_TEXT[e.status] ?? 'Bad Request'}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
    if (requestEnd.hasSubscribers) {
      requestEnd.publish({ method: 'http', outcome: e.code, status: e.status, durationSeconds: 0 });
    }
  });
}
