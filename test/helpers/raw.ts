import { connect } from 'node:net';
import { request } from 'undici';

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  json(): {
    jsonrpc: string;
    id: unknown;
    error?: { code: number; message: string; data?: Record<string, unknown> };
    result?: unknown;
  };
}

/** A POST with exactly the given headers and body, as a misbehaving client might send it. */
export async function post(
  url: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
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

/** toolgate's refusal as the client received it: a tool result with isError, or a JSON-RPC error. */
export interface Refused {
  readonly form: 'tool_result' | 'error';
  readonly code: string | undefined;
  readonly data: Record<string, unknown>;
  /** What the model or the client is told: the tool result's text, or the error message. */
  readonly text: string;
}

/** Reads a refusal in either wire form; undefined when the answer is a result that refuses nothing. */
export function refusalOf(r: RawResponse): Refused | undefined {
  const body = messageOf(r);
  if (body.error !== undefined) {
    const data = body.error.data ?? {};
    return { form: 'error', code: data.code as string | undefined, data, text: body.error.message };
  }
  const result = body.result as
    | { isError?: boolean; content?: { text?: string }[]; _meta?: Record<string, unknown> }
    | undefined;
  if (result?.isError !== true) return undefined;
  const data = (result._meta?.['io.toolgate/error'] ?? {}) as Record<string, unknown>;
  return {
    form: 'tool_result',
    code: data.code as string | undefined,
    data,
    text: (result.content ?? []).map((c) => c.text ?? '').join('\n'),
  };
}

/**
 * Asserts that a tools/call was refused as a tool result the model reads
 * (HTTP 200, isError, the code in _meta), and returns its machine data.
 */
export function refusedCall(r: RawResponse, code: string): Record<string, unknown> {
  if (r.status !== 200)
    throw new Error(`expected a 200 tool result refusing with ${code}, got HTTP ${r.status}: ${r.text.slice(0, 300)}`);
  const refused = refusalOf(r);
  if (refused?.form !== 'tool_result' || refused.code !== code) {
    throw new Error(
      `expected a tool result refusing with ${code}, got ${refused?.form ?? 'no refusal'} ${refused?.code ?? ''}: ${r.text.slice(0, 300)}`,
    );
  }
  return refused.data;
}

/** Whether the answer is a result toolgate let through: HTTP 200 and no refusal in either form. */
export function passed(r: RawResponse): boolean {
  return r.status === 200 && refusalOf(r) === undefined;
}

/** The JSON-RPC answer of a response in either transport form: a JSON body, or the last message of an event stream. */
function messageOf(r: RawResponse): ReturnType<RawResponse['json']> {
  if (!/^(event|data|id|:)/.test(r.text)) return r.json();
  const data = r.text.split('\n').findLast((l) => l.startsWith('data:'));
  if (data === undefined) throw new Error(`an event stream with no message: ${r.text.slice(0, 300)}`);
  return JSON.parse(data.slice(5)) as ReturnType<RawResponse['json']>;
}
