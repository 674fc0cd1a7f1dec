import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { headerSequence, type BenchRequest } from './request.ts';

/**
 * autocannon, run inside the orchestrator process. The orchestrator does
 * nothing else while a measurement runs (children log to files, /proc is read
 * only before and after), so an extra load-generator process would take the
 * same CPU from the servers and add spawn and IPC costs; in-process it also
 * hands us each response's exact duration for the serial latency figures.
 */

interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  overallRate?: number;
  pipelining: number;
  method: string;
  headers: Record<string, string>;
  body: string;
  /** One request template whose setupRequest gives each request its headers. */
  requests?: Array<{ setupRequest: (r: { headers: Record<string, string> }) => { headers: Record<string, string> } }>;
}

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  requests: { total: number };
  statusCodeStats: Record<string, { count: number }>;
}

type Autocannon = (opts: AutocannonOptions, cb: (err: Error | null, result: AutocannonResult) => void) => EventEmitter;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export interface LoadRun {
  readonly requests: number;
  readonly rps: number;
  /** Connection errors, timeouts and answers with another status than expected. */
  readonly failures: number;
  /** Per-response times in ms (autocannon's histogram keeps whole ms only); empty unless asked for. */
  readonly latenciesMs: readonly number[];
}

export function load(
  url: string,
  req: BenchRequest,
  opts: { connections: number; seconds: number; expectStatus: number; recordLatencies?: boolean; rate?: number },
): Promise<LoadRun> {
  const latencies: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: opts.connections,
        duration: opts.seconds,
        ...(opts.rate === undefined ? {} : { overallRate: opts.rate }),
        pipelining: 1,
        method: req.method,
        headers: { ...req.headers },
        body: req.body,
        // A rotated header: every request built anew with the next value (all connections share the sequence).
        ...(req.rotate === undefined ? {} : { requests: [{ setupRequest: rotating(req) }] }),
      },
      (err, result) => {
        if (err) return reject(err);
        const ok = result.statusCodeStats[String(opts.expectStatus)]?.count ?? 0;
        const answered = Object.values(result.statusCodeStats).reduce((n, s) => n + s.count, 0);
        resolve({
          requests: result.requests.total,
          rps: result.requests.total / result.duration,
          failures: result.errors + result.timeouts + (answered - ok),
          latenciesMs: latencies,
        });
      },
    );
    if (opts.recordLatencies) {
      instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => latencies.push(ms));
    }
  });
}

function rotating(req: BenchRequest): (r: { headers: Record<string, string> }) => { headers: Record<string, string> } {
  const next = headerSequence(req);
  return (r) => {
    r.headers = { ...r.headers, ...next() };
    return r;
  };
}
