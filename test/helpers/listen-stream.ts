/**
 * A 2026-07-28 client's side of toolgate's own notifications: the `_meta` a
 * request carries, its headers, and a `subscriptions/listen` stream read as
 * events arrive.
 */
import { request } from 'node:http';
import { createParser } from 'eventsource-parser';

export const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

export function modernHeaders(method: string, key: string, name?: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(name !== undefined && { 'mcp-name': name }),
    authorization: `Bearer ${key}`,
  };
}

export interface Notification {
  method: string;
  params?: { _meta?: Record<string, unknown> };
}

export interface ListenStream {
  /** Waits for the next notification of `method`, dropping what came before it. */
  next(method: string): Promise<Notification>;
  /** Every notification of `method` so far. */
  count(method: string): number;
  close(): void;
}

/** Opens a `subscriptions/listen` stream that opted in to tool list changes. */
export function listen(url: string, key: string, id: string): Promise<ListenStream> {
  const seen: Notification[] = [];
  const all: Notification[] = [];
  let wake: (() => void) | undefined;
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: { notifications: { toolsListChanged: true }, _meta: MODERN_META },
  });
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: modernHeaders('subscriptions/listen', key) }, (res) => {
      if (res.statusCode !== 200 || !String(res.headers['content-type']).startsWith('text/event-stream')) {
        reject(new Error(`listen answered ${res.statusCode} ${res.headers['content-type']}`));
        return;
      }
      const parser = createParser({
        onEvent: (e) => {
          const n = JSON.parse(e.data) as Notification;
          seen.push(n);
          all.push(n);
          wake?.();
        },
      });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => parser.feed(chunk));
      resolve({
        count: (method) => all.filter((n) => n.method === method).length,
        async next(method) {
          for (;;) {
            const i = seen.findIndex((n) => n.method === method);
            if (i >= 0) return seen.splice(0, i + 1).at(-1) as Notification;
            await new Promise<void>((r) => (wake = r));
          }
        },
        close: () => req.destroy(),
      });
    });
    req.on('error', () => {});
    req.end(body);
  });
}
