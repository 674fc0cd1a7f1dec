/**
 * Bounded load from a fixed number of connections, recording every request:
 * when it started and ended, its status and error code. A request that gets
 * no answer within `hangMs` is a hang. Plus a replayer that uses every
 * one-time token twice, a short while apart, and counts second uses that
 * were accepted.
 */
import { Pool } from 'undici';
import type { Issuer } from './tokens.ts';

export type Kind = 'call' | 'list' | 'discover' | 'once';

export interface Sample {
  readonly kind: Kind;
  readonly start: number;
  readonly end: number;
  /** 0 when no HTTP answer came (reset, hang). */
  readonly status: number;
  readonly code: string | undefined;
  readonly hung: boolean;
}

export const STATIC_KEY = 'chaos-agent-key-7f3a9c1e5b';
export const PRINCIPAL = 'agent';

const MIX: readonly Kind[] = ['call', 'call', 'call', 'list', 'discover', 'once'];

const bodies: Record<Exclude<Kind, 'once'>, string> = {
  call: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'echo', arguments: { text: 'x' } },
  }),
  list: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  discover: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'toolgate/discover', params: { query: 'echo text' } }),
};

export interface Load {
  stop(): Promise<Sample[]>;
}

/**
 * Each connection sends at most one request per `paceMs`: bounded load leaves
 * the machine headroom, so latencies measure toolgate, not a starved CPU.
 */
export function startLoad(url: string, issuer: Issuer, connections = 20, paceMs = 100, hangMs = 10_000): Load {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections, headersTimeout: hangMs, bodyTimeout: hangMs });
  const samples: Sample[] = [];
  let running = true;
  const worker = async (n: number) => {
    // oxlint-disable-next-line no-unmodified-loop-condition -- stop() clears `running` while the loop awaits
    for (let i = n; running; i++) {
      const kind = MIX[i % MIX.length] as Kind;
      const authorization = `Bearer ${kind === 'once' ? await issuer.token(PRINCIPAL) : STATIC_KEY}`;
      const body = kind === 'once' ? bodies.call : bodies[kind];
      const sample = await send(pool, target.pathname, authorization, body, kind);
      samples.push(sample);
      const rest = paceMs - (sample.end - sample.start);
      if (rest > 0) await new Promise((r) => setTimeout(r, rest));
    }
  };
  const workers = Array.from({ length: connections }, (_, n) => worker(n));
  return {
    async stop() {
      running = false;
      await Promise.all(workers);
      await pool.close();
      return samples;
    },
  };
}

export async function send(pool: Pool, path: string, authorization: string, body: string, kind: Kind): Promise<Sample> {
  const start = Date.now();
  try {
    const res = await pool.request({
      path,
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization },
    });
    const text = await res.body.text();
    let code: string | undefined;
    try {
      code = (JSON.parse(text) as { error?: { data?: { code?: string } } }).error?.data?.code;
    } catch {
      code = 'unparsable';
    }
    return { kind, start, end: Date.now(), status: res.statusCode, code, hung: false };
  } catch (err) {
    const c = (err as { code?: string }).code;
    return {
      kind,
      start,
      end: Date.now(),
      status: 0,
      code: c ?? 'error',
      hung: c === 'UND_ERR_HEADERS_TIMEOUT' || c === 'UND_ERR_BODY_TIMEOUT',
    };
  }
}

export interface Replayer {
  /** Tokens whose second use was accepted. */
  stop(): Promise<number>;
}

/** Every `everyMs`, a new token is used, then used again `gapMs` later (on a fresh connection). */
export function startReplayer(url: string, issuer: Issuer, everyMs = 100, gapMs = 300): Replayer {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 8, headersTimeout: 10_000, bodyTimeout: 10_000 });
  let replays = 0;
  let running = true;
  const pending: Promise<void>[] = [];
  const once = async () => {
    const token = await issuer.token(PRINCIPAL);
    const first = await send(pool, target.pathname, `Bearer ${token}`, bodies.call, 'once');
    if (first.status !== 200) return;
    await new Promise((r) => setTimeout(r, gapMs));
    const second = await send(pool, target.pathname, `Bearer ${token}`, bodies.call, 'once');
    if (second.status === 200) replays++;
  };
  const loop = (async () => {
    // oxlint-disable-next-line no-unmodified-loop-condition -- stop() clears `running` while the loop awaits
    while (running) {
      pending.push(once());
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await Promise.all(pending);
      await pool.close();
      return replays;
    },
  };
}
