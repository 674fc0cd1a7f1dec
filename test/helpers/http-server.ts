import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  readonly server: Server;
  readonly origin: string;
  close(): Promise<void>;
}

/** A node:http server on a free loopback port that closes all its sockets on close(). */
export async function listenOnLoopback(
  handler: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>,
): Promise<Listening> {
  // A handler that fails cuts its exchange, so the test that sent it fails on it.
  const server = createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch((err: unknown) =>
      res.destroy(err instanceof Error ? err : new Error(String(err))),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    server,
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
