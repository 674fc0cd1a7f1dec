import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RedisClient } from '../../src/cache/redis.ts';
import { StartupError } from '../../src/errors.ts';
import { startPolicyServer, type PolicyServer } from '../helpers/mcp-policy-server.ts';
import { freePort } from '../helpers/ports.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { readyClient } from '../helpers/redis-client.ts';
import { startToolgate } from '../helpers/toolgate.ts';
import { waitFor } from '../helpers/wait.ts';

const POLICY = 'version: 1\ngrants:\n  - { principal: "*", tool: echo, effect: allow }\n';

/** What keeps a process alive or holds a port, by kind, with the counts of each. */
function resources(): Map<string, number> {
  const out = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) out.set(kind, (out.get(kind) ?? 0) + 1);
  return out;
}

function grown(before: Map<string, number>): string[] {
  return [...resources()]
    .filter(([kind, n]) => n > (before.get(kind) ?? 0))
    .map(([kind, n]) => `${kind} ${before.get(kind) ?? 0} → ${n}`);
}

/** Holds a port as another process would, so a listener of toolgate's cannot bind it. */
async function holdPort(): Promise<{ readonly port: number; readonly release: () => Promise<void> }> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { port, release: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * toolgate started in process with a start-up error at one step after
 * another, each from a real cause. Whatever the step, the start rejects
 * with a StartupError and leaves nothing open: no listener, socket, timer,
 * file watcher or Redis connection more than before it began.
 */
describe('a start that fails at any step closes everything it opened', () => {
  let dir: string;
  let upstream: PolicyServer;
  let redis: RedisServer;
  let observer: RedisClient;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-teardown-'));
    await writeFile(join(dir, 'policy.yaml'), POLICY);
    await writeFile(join(dir, 'broken.yaml'), 'version: 1\ngrantz: []\n');
    await writeFile(join(dir, 'short-secret'), 'too short');
    upstream = await startPolicyServer();
    redis = await startRedis();
    observer = await readyClient(redis.url, { commandTimeoutMs: 2000, name: 'teardown-observer' });
  });
  after(async () => {
    observer.disconnect();
    await redis.kill();
    await upstream.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Connections other than the observer's own. */
  const redisClients = async () =>
    String(await observer.call('CLIENT', 'LIST'))
      .split('\n')
      .filter((l) => l.includes(' name=') && !l.includes('name=teardown-observer')).length;

  const withRedis = () => ['--policy-file', join(dir, 'policy.yaml'), '--redis-url', redis.url];

  const steps: {
    readonly step: string;
    readonly flags: () => Promise<{ flags: string[]; release?: () => Promise<void> }>;
  }[] = [
    {
      step: 'the policy (invalid), after Redis connected',
      flags: async () => ({ flags: ['--policy-file', join(dir, 'broken.yaml'), '--redis-url', redis.url] }),
    },
    {
      step: 'the approvals (a secret too short), after the watcher, grant store, catalogue and Redis opened',
      flags: async () => ({ flags: [...withRedis(), '--approval-secret-file', join(dir, 'short-secret')] }),
    },
    {
      step: 'the approver page (its port taken), after everything before it',
      flags: async () => {
        const held = await holdPort();
        return { flags: [...withRedis(), '--approval-port', String(held.port)], release: held.release };
      },
    },
    {
      step: 'the MCP listener (its port taken), after the whole policy mode opened',
      flags: async () => {
        const held = await holdPort();
        return {
          flags: [...withRedis(), '--port', String(held.port), '--deferred-tools', 'true'],
          release: held.release,
        };
      },
    },
    {
      step: 'the gRPC API (its port taken), after the listeners bound',
      flags: async () => {
        const held = await holdPort();
        return { flags: [...withRedis(), '--grpc', 'true', '--grpc-port', String(held.port)], release: held.release };
      },
    },
  ];

  for (const { step, flags } of steps) {
    it(`fails at ${step}`, async () => {
      const clientsBefore = await redisClients();
      const { flags: args, release } = await flags();
      const baseline = resources();
      try {
        await assert.rejects(startToolgate(upstream.origin, args), StartupError);
        await waitFor(
          () => grown(baseline).length === 0,
          `handles back to before the start (${grown(baseline).join(', ')})`,
        );
        await waitFor(async () => (await redisClients()) === clientsBefore, "toolgate's Redis connections closed");
      } finally {
        await release?.();
      }
    });
  }

  it('stops before its first catalogue sync without an unhandled rejection; ready says why', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      // Nothing listens there: the catalogue is never read, so the start is never ready.
      const silent = `http://127.0.0.1:${await freePort()}`;
      const gate = await startToolgate(silent, withRedis());
      await gate.close();
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(unhandled, []);
      await assert.rejects(gate.ready, /closed before a catalogue was read/);
    } finally {
      process.off('unhandledRejection', record);
    }
  });

  it('stops after a start that succeeded with the same teardown, leaving nothing open', async () => {
    const clientsBefore = await redisClients();
    const baseline = resources();
    const gate = await startToolgate(upstream.origin, [
      ...withRedis(),
      '--grpc',
      'true',
      '--grpc-port',
      String(await freePort()),
      '--approval-port',
      String(await freePort()),
    ]);
    await gate.ready;
    assert.ok((await redisClients()) > clientsBefore, "the probe sees toolgate's Redis connections");
    await gate.close();
    await waitFor(
      () => grown(baseline).length === 0,
      `handles back to before the start (${grown(baseline).join(', ')})`,
    );
    await waitFor(async () => (await redisClients()) === clientsBefore, "toolgate's Redis connections closed");
  });
});
