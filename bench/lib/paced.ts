import { Pool } from 'undici';
import type { LoadRun } from './load.ts';
import { headerSequence, type BenchRequest } from './request.ts';

const TICK_MS = 1;
const DRAIN_MS = 5000;

/**
 * Load at a fixed offered rate, spread evenly over time, to several targets
 * at once: every millisecond it sends each target the requests its schedule
 * says are due, each on an idle keep-alive connection. autocannon's own rate
 * limit sends each connection's share at the start of every second and then
 * waits, so a "fixed rate" run was a saturated burst plus idle time, and two
 * proxies measured side by side fought over the CPU in the same burst. Paced
 * requests reach a proxy one at a time, as a sidecar at moderate load sees
 * them. Which target is sent to first rotates every tick: with two proxies
 * on one CPU, the one whose requests arrive second runs after the other on
 * that CPU, and a fixed order showed in their ratio.
 */
export async function paced(
  sinks: ReadonlyArray<{ readonly origin: string; readonly req: BenchRequest }>,
  opts: { connections: number; seconds: number; rate: number; expectStatus: number; recordLatencies?: boolean },
): Promise<LoadRun[]> {
  const targets = sinks.map(({ origin, req }) => ({
    req,
    headers: headerSequence(req),
    latenciesMs: [] as number[],
    pool: new Pool(origin, { connections: opts.connections, pipelining: 1 }),
    sent: 0,
    answered: 0,
    failures: 0,
    inFlight: new Set<Promise<void>>(),
  }));
  const send = (t: (typeof targets)[number]): void => {
    t.sent++;
    const sentAt = performance.now();
    const p = t.pool
      .request({ method: t.req.method, path: t.req.path, headers: t.headers(), body: t.req.body })
      .then(
        async (res) => {
          await res.body.dump();
          // From sending it to the end of its answer.
          if (opts.recordLatencies === true) t.latenciesMs.push(performance.now() - sentAt);
          if (res.statusCode === opts.expectStatus) t.answered++;
          else t.failures++;
        },
        () => {
          t.failures++;
        },
      )
      .finally(() => t.inFlight.delete(p));
    t.inFlight.add(p);
  };
  const start = performance.now();
  const total = Math.round(opts.rate * opts.seconds);
  let tick = 0;
  await new Promise<void>((resolve) => {
    const onTick = (): void => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * opts.rate));
      for (let i = 0; i < targets.length; i++) {
        const t = targets[(i + tick) % targets.length] as (typeof targets)[number];
        while (t.sent < due) send(t);
      }
      tick++;
      if (targets.some((t) => t.sent < total)) setTimeout(onTick, TICK_MS);
      else resolve();
    };
    onTick();
  });
  const late = await Promise.race([
    Promise.all(targets.flatMap((t) => [...t.inFlight])).then(() => false),
    new Promise<boolean>((r) => setTimeout(() => r(true), DRAIN_MS).unref()),
  ]);
  const seconds = (performance.now() - start) / 1000;
  await Promise.all(targets.map((t) => t.pool.destroy()));
  return targets.map((t) => ({
    requests: t.answered + t.failures,
    rps: (t.answered + t.failures) / seconds,
    failures: t.failures + (late ? t.inFlight.size : 0),
    latenciesMs: t.latenciesMs,
  }));
}
