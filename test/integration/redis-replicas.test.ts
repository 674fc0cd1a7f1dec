import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run as grantsCli, type GrantsIo } from '../../src/commands/grants.ts';
import { startPolicyServer, type PolicyServer } from '../helpers/mcp-policy-server.ts';
import { passed, post, refusalOf, refusedCall } from '../helpers/raw.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';
import { sha256 } from '../helpers/static-keys.ts';

const KEY = 'agent-3c5e7a9b1d2f4e6a8c0b';
const auth = { authorization: `Bearer ${KEY}` };
const call = (id: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'search_docs', arguments: { query: 'x' } },
  });
const discover = (id: number, params: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'toolgate/discover', params });

/** Runs the admin CLI in process, as an operator would from a shell. */
async function grants(redis: RedisServer, action: string, ...argv: string[]): Promise<string> {
  let out = '';
  let err = '';
  const io: GrantsIo = {
    env: {},
    stdout: { write: (s: string) => ((out += s), true) },
    stderr: { write: (s: string) => ((err += s), true) },
  };
  const code = await grantsCli([action, '--redis-url', redis.url, '--domain', 'it', ...argv], io);
  assert.equal(code, 0, err);
  return out;
}

async function until(check: () => Promise<boolean>, ms: number): Promise<number> {
  const began = Date.now();
  while (Date.now() - began < ms) {
    if (await check()) return Date.now() - began;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`condition not reached within ${ms} ms`);
}

describe('grants shared by two toolgate replicas through Redis', () => {
  let dir: string;
  let redis: RedisServer;
  let upstream: PolicyServer;
  let a: RunningToolgate;
  let b: RunningToolgate;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-redis-'));
    await writeFile(
      join(dir, 'keys.yaml'),
      `keys:\n  - { sha256: ${sha256(KEY)}, principal: agent, scopes: [docs] }\n`,
    );
    await writeFile(join(dir, 'policy.yaml'), 'version: 1\nauthentication:\n  staticKeys: { file: keys.yaml }\n');
    redis = await startRedis();
    await grants(redis, 'set', '--principal', '*', '--tool', 'search_docs', '--scopes', 'docs', '--effect', 'allow');
    await grants(redis, 'set', '--principal', '*', '--tool', 'rotate_keys', '--scopes', 'docs', '--effect', 'allow');
    upstream = await startPolicyServer();
    const flags = [
      '--policy-file',
      join(dir, 'policy.yaml'),
      '--redis-url',
      redis.url,
      '--grant-source',
      'redis',
      '--policy-domain',
      'it',
      '--grants-staleness-ms',
      '1000',
      '--grants-check-interval-ms',
      '200',
      '--redis-command-timeout-ms',
      '300',
      '--deferred-tools',
      'true',
    ];
    [a, b] = await Promise.all([startToolgate(upstream.origin, flags), startToolgate(upstream.origin, flags)]);
    await Promise.all([a.ready, b.ready]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await upstream?.close();
    await redis?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('stops a revoked grant on both replicas, and invalidates cursors and activations issued before', async () => {
    assert.ok(passed(await post(a.url, call(1), auth)));
    assert.ok(passed(await post(b.url, call(2), auth)));
    const page = (await post(a.url, discover(3, { query: 'rotate keys', limit: 1 }), auth)).json().result as {
      tools: { name: string }[];
      nextCursor?: string;
    };
    assert.deepEqual(
      page.tools.map((t) => t.name),
      ['rotate_keys'],
    );
    const listed = (await post(a.url, '{"jsonrpc":"2.0","id":4,"method":"tools/list"}', auth)).json().result as {
      tools: { name: string }[];
    };
    assert.ok(
      listed.tools.some((t) => t.name === 'rotate_keys'),
      'activated by discovery',
    );
    const onB = (await post(b.url, '{"jsonrpc":"2.0","id":41,"method":"tools/list"}', auth)).json().result as {
      tools: { name: string }[];
    };
    assert.ok(
      onB.tools.some((t) => t.name === 'rotate_keys'),
      'the activation is shared with the other replica',
    );

    await grants(redis, 'delete', '--principal', '*', '--tool', 'search_docs', '--scopes', 'docs', '--effect', 'allow');
    const revoked = async (url: string, id: number) =>
      refusalOf(await post(url, call(id), auth))?.code === 'tool_not_granted';
    const took = await until(async () => (await revoked(a.url, 5)) && (await revoked(b.url, 6)), 2000);
    assert.ok(took < 2000);

    const relisted = (await post(a.url, '{"jsonrpc":"2.0","id":7,"method":"tools/list"}', auth)).json().result as {
      tools: { name: string }[];
    };
    assert.ok(!relisted.tools.some((t) => t.name === 'rotate_keys'), 'activations from the old revision are gone');
    if (page.nextCursor !== undefined) {
      const stale = await post(a.url, discover(8, { query: 'rotate keys', limit: 1, cursor: page.nextCursor }), auth);
      assert.equal(stale.json().error?.data?.code, 'invalid_cursor');
    }
  });

  it('fails closed with grants_unavailable when Redis dies, and recovers when it is back, without a restart', async () => {
    await grants(redis, 'set', '--principal', 'agent', '--tool', 'search_docs', '--effect', 'allow');
    await until(async () => passed(await post(a.url, call(10), auth)), 2000);
    await redis.kill();
    const began = Date.now();
    let refused = 0;
    let slowest = 0;
    for (;;) {
      const t = Date.now();
      const res = await post(a.url, call(11), auth);
      slowest = Math.max(slowest, Date.now() - t);
      if (refusalOf(res) !== undefined) {
        refusedCall(res, 'grants_unavailable');
        refused++;
        if (refused >= 3) break;
      }
      assert.ok(Date.now() - began < 3000, 'failed closed within the staleness bound');
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(slowest < 1500, `no request hung (slowest ${slowest} ms)`);

    // Back without its data: revision 1 now, below what the replicas
    // confirmed. That is a store fault, answered grants_unavailable (retryable), never tool_not_granted.
    await redis.restart();
    await grants(redis, 'set', '--principal', 'agent', '--tool', 'search_docs', '--effect', 'allow');
    await new Promise((r) => setTimeout(r, 600));
    for (const url of [a.url, b.url]) {
      const res = await post(url, call(12), auth);
      const data = refusedCall(res, 'grants_unavailable');
      assert.equal(data.retryAfterMs, 1000, 'a revision that went backwards is not believed');
      assert.match(refusalOf(res)?.text ?? '', /again in a few seconds/);
    }
    await grants(redis, 'revision', '--reset');
    const recovered = await until(
      async () => passed(await post(a.url, call(13), auth)) && passed(await post(b.url, call(14), auth)),
      5000,
    );
    assert.ok(recovered < 5000);
  });
});
