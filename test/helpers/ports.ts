import { createServer } from 'node:net';

/**
 * A port that was free a moment ago on loopback. Chosen by the test or bench
 * rather than by the child, so the caller knows every address without
 * parsing output.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}
