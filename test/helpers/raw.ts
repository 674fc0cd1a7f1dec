import { connect } from 'node:net';
import { request } from 'undici';

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  json(): { jsonrpc: string; id: unknown; error?: { code: number; message: string; data?: Record<string, unknown> }; result?: unknown };
}

/** A POST with exactly the given headers and body, as a misbehaving client might send it. */
export async function post(url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<RawResponse> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) };
}

/**
 * Writes raw bytes on a fresh TCP connection and collects everything the
 * server sends until it closes the connection (or `ms` elapse).
 */
export function rawExchange(port: number, chunks: readonly (string | Buffer)[], ms = 2000, gapMs = 0): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(received).toString('utf8'));
    };
    const timer = setTimeout(done, ms);
    socket.on('data', (d) => received.push(d));
    socket.on('close', done);
    socket.on('error', () => {});
    socket.on('connect', () => {
      void (async () => {
        for (const c of chunks) {
          if (socket.destroyed) return;
          socket.write(c);
          if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
        }
      })();
    });
  });
}
