import { setTimeout as sleep } from 'node:timers/promises';
import { rssMb } from './procstat.ts';
import type { Startup } from './runner.ts';
import { startStub, type Launcher, type StartContext } from './targets.ts';

/**
 * How long a freshly ready process is left alone before its idle RSS is read:
 * idle means idle, so past toolgate's default idle heap trim
 * (TOOLGATE_HEAP_TRIM_IDLE_MS, 5 s after ready) and the collection it runs.
 */
const SETTLE_MS = 7000;

/** Tools the large-catalogue stub advertises besides the two real ones. */
const CATALOGUE_TOOLS = 1000;

/**
 * Start-up figures, `starts` times, interleaved: the floor, toolgate with no
 * policy, and toolgate with a policy in front of a 1,000-tool catalogue. Each
 * is started fresh, timed from spawn to ready, left idle for SETTLE_MS, its
 * RSS read, and stopped.
 */
export async function measureStartup(
  ctx: StartContext,
  starts: number,
  launchers: { readonly floor: Launcher; readonly bare: Launcher; readonly catalogue: Launcher },
): Promise<Startup> {
  const out = { readyMs: [] as number[], rssIdleMb: [] as number[], floorRssIdleMb: [] as number[], catalogueRssIdleMb: [] as number[] };
  const bigStub = await startStub(['--tools', String(CATALOGUE_TOOLS)]);
  try {
    const runs: Array<[Launcher, StartContext, (rss: number, readyMs: number | undefined) => void]> = [
      [launchers.floor, ctx, (rss) => out.floorRssIdleMb.push(rss)],
      [launchers.bare, ctx, (rss, ready) => {
        out.rssIdleMb.push(rss);
        if (ready !== undefined) out.readyMs.push(ready);
      }],
      [launchers.catalogue, { ...ctx, stub: bigStub }, (rss) => out.catalogueRssIdleMb.push(rss)],
    ];
    for (let i = 0; i < starts; i++) {
      const shift = i % runs.length;
      for (const [launch, c, record] of [...runs.slice(shift), ...runs.slice(0, shift)]) {
        const target = await launch(c);
        try {
          await sleep(SETTLE_MS);
          const rss = rssMb(target.pid);
          if (rss !== undefined) record(rss, target.readyMs);
        } finally {
          await target.stop();
        }
      }
    }
  } finally {
    await bigStub.stop();
  }
  return out;
}
