import { once } from 'node:events';
import type { Server } from 'node:http';

export async function listen(server: Server, host: string, port: number): Promise<void> {
  server.listen(port, host);
  await once(server, 'listening');
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Stop accepting, close idle keep-alive connections, and ask clients of
 * in-flight requests to reconnect elsewhere; only when the drain window ends
 * are the remaining connections cut.
 */
export async function drain(server: Server, timeoutMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Before the handler, which may answer at once (a 405, a refusal): a
  // header set after the response is sent throws, and would end the process.
  server.prependListener('request', (_req, res) => res.setHeader('connection', 'close'));
  server.closeIdleConnections();
  const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  await Promise.race([closed, timedOut]);
  clearInterval(idleSweep);
  clearTimeout(timer);
  server.closeAllConnections();
  await closed;
}
