import { once } from 'node:events';
import { createRedisClient, parseRedisConfig } from '../../src/cache/redis.ts';
import { createRedisSource } from '../../src/grants/sources/redis.ts';
import { startRedis } from '../../test/helpers/redis.ts';
import { SSE_TOOL_NAME, TOOLS } from './request.ts';
import { toolgate, type Launcher } from './targets.ts';

const DOMAIN = 'bench';

/**
 * The policy case with grants in Redis: a real redis-server holding the same
 * rows the file policy grants, toolgate reading them through its grant store
 * (L1 in process, L2 and the revision in Redis).
 */
export function toolgateWithRedisGrants(name: string, policyFile: string): Launcher {
  return async (ctx) => {
    const redis = await startRedis();
    const parsed = parseRedisConfig({ url: redis.url });
    if (!parsed.ok) throw new Error(`${parsed.setting}: ${parsed.problem}`);
    const client = createRedisClient(parsed.config, { name: 'bench-seed' });
    // Commands fail fast while disconnected (no offline queue), so wait for the connection.
    await once(client, 'ready');
    const source = createRedisSource(client, DOMAIN);
    if (source === undefined) throw new Error('invalid bench domain');
    for (const [tool, scope] of [
      [TOOLS[0]?.name as string, 'issues.read'],
      [SSE_TOOL_NAME, 'ci.run'],
    ] as const) {
      const set = await source.set({ principal: '*', tool, scopes: [scope], effect: 'allow' });
      if (!set.ok) throw new Error(`seeding grants failed: ${set.code}`);
    }
    client.disconnect();
    const target = await toolgate(name, {
      args: [
        '--policy-file',
        policyFile,
        '--redis-url',
        redis.url,
        '--grant-source',
        'redis',
        '--policy-domain',
        DOMAIN,
      ],
    })(ctx);
    return {
      ...target,
      async stop() {
        l1HitRates.set(name, await snapshotHitRate(target.adminOrigin as string));
        const code = await target.stop();
        await redis.close();
        return code;
      },
    };
  };
}

/** Share of grant snapshot lookups the in-process cache answered, per case, read before each stop. */
export const l1HitRates = new Map<string, number | null>();

async function snapshotHitRate(admin: string): Promise<number | null> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  const read = (result: string) =>
    Number(
      new RegExp(`^toolgate_grant_snapshot_lookups_total\\{result="${result}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN,
    );
  const hits = read('hit');
  const total = hits + read('miss');
  return Number.isFinite(total) && total > 0 ? Math.round((hits / total) * 10_000) / 10_000 : null;
}
