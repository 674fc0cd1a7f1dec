import { Agent, request } from 'node:http';
import type { BenchRequest } from './request.ts';

export interface SseRun {
  /** Per request: ms from sending it to holding the complete first event. */
  readonly firstEventMs: readonly number[];
  readonly failures: number;
}

/**
 * Serial SSE requests over one keep-alive connection. A request counts only
 * if it gets 200 with `text/event-stream` and its stream ends normally; each
 * stream is read to its end before the next request, as a client would.
 */
export async function firstEventTimes(url: string, req: BenchRequest, samples: number): Promise<SseRun> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  let failures = 0;
  try {
    for (let i = 0; i < samples; i++) {
      const ms = await once(url, req, agent);
      if (ms === undefined) failures++;
      else times.push(ms);
    }
  } finally {
    agent.destroy();
  }
  return { firstEventMs: times, failures };
}

function once(url: string, req: BenchRequest, agent: Agent): Promise<number | undefined> {
  return new Promise((resolve) => {
    const start = process.hrtime.bigint();
    let firstAt: bigint | undefined;
    let seen = '';
    const r = request(url, { method: req.method, headers: req.headers, agent }, (res) => {
      const isSse = res.statusCode === 200 && (res.headers['content-type'] ?? '').startsWith('text/event-stream');
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (firstAt !== undefined) return;
        seen += chunk;
        // An event is complete (dispatched by a client) at the blank line after its data.
        const data = seen.indexOf('data:');
        if (data >= 0 && seen.indexOf('\n\n', data) >= 0) firstAt = process.hrtime.bigint();
      });
      res.once('end', () => resolve(isSse && firstAt !== undefined ? Number(firstAt - start) / 1e6 : undefined));
      res.once('error', () => resolve(undefined));
    });
    r.once('error', () => resolve(undefined));
    r.end(req.body);
  });
}
