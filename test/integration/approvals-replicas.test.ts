/**
 * Two toolgate processes sharing a real redis-server race to spend one
 * approval: the spend is one Lua step, so exactly one of them runs the call.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  ALICE_KEY,
  APPROVAL_KEYS_YAML,
  CALLER_KEY,
  approvalPolicy,
  startApprovalUpstream,
  type ApprovalUpstream,
} from '../helpers/approval-upstream.ts';
import { ApproverClient } from '../helpers/approver-client.ts';
import { freePort } from '../helpers/ports.ts';
import { passed, post, refusalOf, refusedCall } from '../helpers/raw.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { startToolgateProcess, type ToolgateProcess } from '../helpers/toolgate-process.ts';

const TRIALS = 100;

describe('two replicas sharing Redis race to spend one approval', () => {
  let dir: string;
  let redis: RedisServer;
  let upstream: ApprovalUpstream;
  let replicas: ToolgateProcess[];
  const flags = (page: number) => [
    '--policy-file',
    join(dir, 'policy.yaml'),
    '--redis-url',
    redis.url,
    '--policy-domain',
    'approvals',
    '--approval-secret-file',
    join(dir, 'approval.key'),
    '--approval-port',
    String(page),
  ];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-approvals-'));
    await writeFile(join(dir, 'keys.yaml'), APPROVAL_KEYS_YAML);
    await writeFile(join(dir, 'policy.yaml'), approvalPolicy());
    await writeFile(join(dir, 'approval.key'), randomBytes(32).toString('base64'));
    redis = await startRedis();
    upstream = await startApprovalUpstream();
    replicas = await Promise.all([
      startToolgateProcess(upstream.origin, flags(await freePort())),
      startToolgateProcess(upstream.origin, flags(await freePort())),
    ]);
  });
  after(async () => {
    await Promise.all(replicas?.map((r) => r.close()) ?? []);
    await upstream?.close();
    await redis?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const call = (replica: ToolgateProcess, amount: number, id: number) =>
    post(
      replica.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'refund_payment', arguments: { amount, currency: 'EUR' } },
      }),
      {
        authorization: `Bearer ${CALLER_KEY}`,
        'mcp-protocol-version': '2025-06-18',
      },
    );
  const runs = () => upstream.executions.get('refund_payment') ?? 0;

  it('with grants from the policy file, an approval asked on one replica runs on the other, and on a restarted one', async () => {
    const alice = new ApproverClient();
    const asked = await call(replicas[0] as ToolgateProcess, 777, 1);
    const url = refusedCall(asked, 'approval_required').url as string;
    assert.equal((await alice.signIn(url, ALICE_KEY)).status, 200);
    assert.equal((await alice.decide(url, 'approve')).status, 303);
    const before = runs();
    const elsewhere = await call(replicas[1] as ToolgateProcess, 777, 2);
    assert.ok(passed(elsewhere), elsewhere.text);
    assert.equal(runs(), before + 1);

    const again = await call(replicas[1] as ToolgateProcess, 778, 3);
    const url2 = refusedCall(again, 'approval_required').url as string;
    assert.equal((await alice.decide(url2, 'approve')).status, 303);
    await replicas[1]?.kill();
    replicas[1] = await startToolgateProcess(upstream.origin, flags(await freePort()));
    const restarted = await call(replicas[1], 778, 4);
    assert.ok(passed(restarted), restarted.text);
    assert.equal(runs(), before + 2);
  });

  it(`runs the approved call exactly once in each of ${TRIALS} trials`, async () => {
    const alice = new ApproverClient();
    const outcomes = { executed: 0, racesWithTwoRuns: 0, racesWithNoRun: 0 };
    for (let i = 0; i < TRIALS; i++) {
      const amount = 1000 + i;
      const asked = await call(replicas[i % 2] as ToolgateProcess, amount, 1);
      const url = refusedCall(asked, 'approval_required').url as string;
      // Approved on the page of one replica; the record is shared through Redis.
      if (i === 0) assert.equal((await alice.signIn(url, ALICE_KEY)).status, 200);
      assert.equal((await alice.decide(url, 'approve')).status, 303);
      const before = runs();
      const answers = await Promise.all(replicas.map((r, k) => call(r, amount, 2 + k)));
      const ran = runs() - before;
      const ok = answers.filter(passed).length;
      assert.equal(ok, ran, 'every answer that ran is one upstream run');
      if (ran > 1) outcomes.racesWithTwoRuns++;
      if (ran === 0) outcomes.racesWithNoRun++;
      outcomes.executed += ran;
      // The loser finds the record gone (asked anew) or the winner's spend not yet confirmed (told its outcome is unknown).
      for (const a of answers)
        if (!passed(a))
          assert.ok(['approval_required', 'approval_outcome_unknown'].includes(refusalOf(a)?.code as string), a.text);
    }
    assert.deepEqual(outcomes, { executed: TRIALS, racesWithTwoRuns: 0, racesWithNoRun: 0 });
    console.log(`approval race: ${TRIALS} trials, ${outcomes.executed} upstream executions, 0 double spends`);
  });
});
