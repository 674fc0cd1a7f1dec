import type { IncomingMessage } from 'node:http';

/** The request target's path, without its query string: what routing and span names compare with the MCP path. */
export function requestPath(request: IncomingMessage): string {
  const url = request.url ?? '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
