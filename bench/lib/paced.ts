import { Pool } from 'undici';
import type { LoadRun } from './load.ts';
import type { BenchRequest } from './request.ts';

const TICK_MS = 1;
const DRAIN_MS = 5000;

/**
 * Load at a fixed offered rate, spread evenly over time: every millisecond
 * it sends however many requests the schedule says are due, each on an idle
 * keep-alive connection. autocannon's own rate limit sends each connection's
 * share at the start of every second and then waits, so a "fixed rate" run
 * was a saturated burst plus idle time, and two proxies measured side by
 * side fought over the CPU in the same burst. Paced requests reach a proxy
 * one at a time, as a sidecar at moderate load sees them.
 */
export async function paced(
  origin: string,
  req: BenchRequest,
  opts: { connections: number; seconds: number; rate: number; expectStatus: number },
): Promise<LoadRun> {
  const pool = new Pool(origin, { connections: opts.connections, pipelining: 1 });
  let sent = 0;
  let answered = 0;
  let failures = 0;
  const inFlight = new Set<Promise<void>>();
  const one = (): void => {
    const p = pool.request({ method: req.method, path: req.path, headers: req.headers, body: req.body })
      .then(async (res) => {
        await res.body.dump();
        if (res.statusCode === opts.expectStatus) answered++;
        else failures++;
      }, () => { failures++; })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  const start = performance.now();
  const total = Math.round(opts.rate * opts.seconds);
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * opts.rate));
      while (sent < due) {
        sent++;
        one();
      }
      if (sent < total) setTimeout(tick, TICK_MS);
      else resolve();
    };
    tick();
  });
  const drained = Promise.all(inFlight);
  const late = await Promise.race([drained.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), DRAIN_MS).unref())]);
  const seconds = (performance.now() - start) / 1000;
  await pool.destroy();
  return {
    requests: answered + failures,
    rps: (answered + failures) / seconds,
    failures: failures + (late ? inFlight.size : 0),
    latenciesMs: [],
  };
}
