/**
 * Grants through a real Sentinel deployment (one master, one replica, three
 * sentinels). After a failover the revoked grant must stop working within
 * the staleness bound, not when Sentinel gets round to reconfiguring the old
 * master (about ten seconds later), and a replica's revision never counts as
 * confirmation.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Principal } from '../../src/auth/types.ts';
import { parseRedisConfig } from '../../src/cache/redis.ts';
import { run as grantsCli, type GrantsIo } from '../../src/commands/grants.ts';
import { createRedisGrantStore } from '../../src/grants/redis-store.ts';
import { startPolicyServer, type PolicyServer } from '../helpers/mcp-policy-server.ts';
import { passed, post, refusalOf } from '../helpers/raw.ts';
import { startSentinelSet, type SentinelSet } from '../helpers/redis-topologies.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';
import { sha256 } from '../helpers/static-keys.ts';

const KEY = 'agent-5d7f9b1c3e5a7c9e1b3d';
const auth = { authorization: `Bearer ${KEY}` };
const STALENESS_MS = 1000;
const call = (id: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'search_docs', arguments: { query: 'x' } },
  });

async function grants(url: string, action: string, ...argv: string[]): Promise<void> {
  let err = '';
  const io: GrantsIo = { env: {}, stdout: { write: () => true }, stderr: { write: (s: string) => ((err += s), true) } };
  assert.equal(await grantsCli([action, '--redis-url', url, '--domain', 'it', ...argv], io), 0, err);
}

describe('grants through Redis Sentinel', () => {
  let dir: string;
  let set: SentinelSet;
  let upstream: PolicyServer;
  let gate: RunningToolgate;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-sentinel-'));
    await writeFile(
      join(dir, 'keys.yaml'),
      `keys:\n  - { sha256: ${sha256(KEY)}, principal: agent, scopes: [docs] }\n`,
    );
    await writeFile(join(dir, 'policy.yaml'), 'version: 1\nauthentication:\n  staticKeys: { file: keys.yaml }\n');
    [set, upstream] = await Promise.all([startSentinelSet(), startPolicyServer()]);
    await grants(set.url, 'set', '--principal', '*', '--tool', 'search_docs', '--scopes', 'docs', '--effect', 'allow');
    gate = await startToolgate(upstream.origin, [
      '--policy-file',
      join(dir, 'policy.yaml'),
      '--redis-url',
      set.url,
      '--grant-source',
      'redis',
      '--policy-domain',
      'it',
      '--grants-staleness-ms',
      String(STALENESS_MS),
      '--grants-check-interval-ms',
      '200',
      '--redis-command-timeout-ms',
      '300',
    ]);
    await gate.ready;
  });
  after(async () => {
    await gate?.close();
    await upstream?.close();
    await set?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a revision read from a replica confirms nothing', async () => {
    const config = parseRedisConfig({ url: set.replica.url, commandTimeoutMs: 300, connectTimeoutMs: 500 });
    assert.ok(config.ok);
    const opened = await createRedisGrantStore({
      redis: config.config,
      domain: 'it',
      stalenessMs: 5000,
      checkIntervalMs: 100,
    });
    assert.ok(opened.ok);
    try {
      const agent: Principal = { id: 'agent', scopes: new Set(['docs']), credentialStrength: 'static' };
      assert.equal(opened.store.revision(), undefined);
      assert.deepEqual(await opened.store.snapshot(agent), { ok: false, code: 'grants_unavailable' });
    } finally {
      await opened.store.close();
    }
  });

  it('after a failover, a deny written to the new master is enforced within the staleness bound', async () => {
    assert.ok(passed(await post(gate.url, call(1), auth)));
    await set.failover();
    await grants(set.url, 'set', '--principal', 'agent', '--tool', 'search_docs', '--effect', 'deny');
    const denied = Date.now();
    let last: string | undefined;
    let allowedLate = 0;
    while (Date.now() - denied < 3 * STALENESS_MS) {
      const started = Date.now();
      const res = await post(gate.url, call(2), auth);
      last = refusalOf(res)?.code;
      if (passed(res) && started - denied > STALENESS_MS) allowedLate++;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(allowedLate, 0, 'no call started after the staleness bound was allowed');
    assert.equal(last, 'tool_not_granted');
  });
});
