import { setTimeout as sleep } from 'node:timers/promises';
import { rssMb } from './procstat.ts';
import type { Startup } from './runner.ts';
import { startStub, type Launcher, type StartContext, type Target } from './targets.ts';

/**
 * How long a freshly ready process is left alone before its idle RSS is read:
 * idle means idle, so past toolgate's default idle heap trim
 * (TOOLGATE_HEAP_TRIM_IDLE_MS, 5 s after ready) and the collection it runs.
 */
const SETTLE_MS = 7000;

/** Tools the large-catalogue stub advertises besides the two real ones. */
const CATALOGUE_TOOLS = 1000;

/**
 * Start-up figures, `starts` times: the floor, toolgate with no policy, and
 * toolgate with a policy in front of a 1,000-tool catalogue, each started
 * fresh and stopped after. toolgate with no policy starts first and alone,
 * timed from spawn to ready; the other two start once it is ready, side by
 * side, and all three idle together for SETTLE_MS after the last is ready
 * before their RSS is read. A process's idleness (and so its idle heap trim)
 * is its own CPU's, and its RSS its own pages, so idling together changes
 * neither figure; it takes one settling time per start instead of three.
 */
export async function measureStartup(
  ctx: StartContext,
  starts: number,
  launchers: { readonly floor: Launcher; readonly bare: Launcher; readonly catalogue: Launcher },
): Promise<Startup> {
  const out = {
    readyMs: [] as number[],
    rssIdleMb: [] as number[],
    floorRssIdleMb: [] as number[],
    catalogueRssIdleMb: [] as number[],
  };
  const bigStub = await startStub(['--tools', String(CATALOGUE_TOOLS)]);
  try {
    for (let i = 0; i < starts; i++) {
      const started: Target[] = [];
      try {
        const bare = await launchers.bare(ctx);
        started.push(bare);
        // Both started, even when one fails, so that the finally block stops every one that came up.
        const others = await Promise.allSettled([launchers.floor(ctx), launchers.catalogue({ ...ctx, stub: bigStub })]);
        for (const o of others) if (o.status === 'fulfilled') started.push(o.value);
        const failed = others.find((o) => o.status === 'rejected');
        if (failed !== undefined) throw failed.reason;
        const [floor, catalogue] = others.map((o) => (o as PromiseFulfilledResult<Target>).value) as [Target, Target];
        await sleep(SETTLE_MS);
        const record = (t: Target, into: number[]) => {
          const rss = rssMb(t.pid);
          if (rss !== undefined) into.push(rss);
        };
        record(bare, out.rssIdleMb);
        record(floor, out.floorRssIdleMb);
        record(catalogue, out.catalogueRssIdleMb);
        if (bare.readyMs !== undefined) out.readyMs.push(bare.readyMs);
      } finally {
        await Promise.all(started.map((t) => t.stop()));
      }
    }
  } finally {
    await bigStub.stop();
  }
  return out;
}
