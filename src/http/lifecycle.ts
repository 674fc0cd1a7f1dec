import { once } from 'node:events';
import type { Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import { clientConnection, connectionRefused } from '../telemetry/channels.ts';
import { listenError, type Bind } from './listen-error.ts';

/** How long idle keep-alive connections stay open after SIGTERM, so requests already on their way are answered. */
const DRAIN_IDLE_GRACE_MS = 500;

/** Binds, or throws the StartupError that names the setting to change. */
export async function listen(server: NetServer, bind: Bind): Promise<void> {
  server.listen(bind.port, bind.host);
  try {
    await once(server, 'listening');
  } catch (err) {
    throw listenError((err as NodeJS.ErrnoException).code, bind);
  }
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Connections open (a gauge), and the optional cap with its refusals. */
export function countConnections(server: Server, max: number): void {
  if (max > 0) server.maxConnections = max;
  server.on('connection', (socket) => {
    if (!clientConnection.hasSubscribers) return;
    clientConnection.publish({ delta: 1 });
    socket.once('close', () => clientConnection.publish({ delta: -1 }));
  });
  server.on('drop', () => {
    if (connectionRefused.hasSubscribers) connectionRefused.publish({});
  });
}

/**
 * Stop accepting, answer every request still arriving with `Connection:
 * close`, and only after a short grace close idle keep-alive connections: a
 * request a client sent just before the signal is then answered and not reset.
 * When the drain window ends the remaining connections are cut.
 */
export async function drain(server: Server, timeoutMs: number): Promise<void> {
  // net.Server's close stops accepting but, unlike http.Server's, leaves
  // idle keep-alive connections open.
  const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  // Before the handler, which may answer at once (a 405, a refusal): a
  // header set after the response is sent throws, and would end the process.
  server.prependListener('request', (_req, res) => res.setHeader('connection', 'close'));
  let idleSweep: NodeJS.Timeout | undefined;
  const grace = setTimeout(
    () => {
      server.closeIdleConnections();
      idleSweep = setInterval(() => server.closeIdleConnections(), 100);
    },
    Math.min(DRAIN_IDLE_GRACE_MS, timeoutMs),
  );
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  await Promise.race([closed, timedOut]);
  clearTimeout(grace);
  clearInterval(idleSweep);
  clearTimeout(timer);
  server.closeAllConnections();
  await closed;
}
