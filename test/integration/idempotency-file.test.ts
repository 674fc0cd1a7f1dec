/**
 * Idempotency records in a journal file, for one replica without Redis: they
 * survive the process (SIGKILL included), and the SIGKILL loop never runs a
 * keyed call twice. Real files, real toolgate processes, a counting upstream.
 */
import assert from 'node:assert/strict';
import { appendFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { StartupError } from '../../src/errors.ts';
import { openIdempotencyJournal } from '../../src/execution/idempotency-file.ts';
import { startCountingUpstream, type CountingUpstream } from '../helpers/counting-upstream.ts';
import { AGENT_KEY, executionPolicy, KEYS_YAML, toolCall } from '../helpers/execution-policy.ts';
import { runKillTrials, SAFE_ANSWERS } from '../helpers/kill-trials.ts';
import { passed, post, refusalOf, refusedCall } from '../helpers/raw.ts';
import { startToolgateProcess, type ToolgateProcess } from '../helpers/toolgate-process.ts';

const RETENTION_MS = 60_000;

describe('the idempotency journal', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-idem-file-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('keeps completed, unknown and in-flight records across a reopen; a PENDING one whose lease passed reads as unknown', async () => {
    const path = join(dir, 'a.journal');
    let now = 1_000_000;
    const first = await openIdempotencyJournal(path, RETENTION_MS, () => now);
    const done = await first.claim('done', 'd1', 5_000);
    assert.equal(done.kind, 'acquired');
    await first.settle('done', (done as { token: string }).token, {
      kind: 'completed',
      response: { status: 200, message: { jsonrpc: '2.0', id: 1, result: {} } },
    });
    const running = await first.claim('running', 'd2', 5_000);
    assert.equal(running.kind, 'acquired');
    const freed = await first.claim('freed', 'd3', 5_000);
    await first.settle('freed', (freed as { token: string }).token, { kind: 'released' });
    // No close: the process died.
    const second = await openIdempotencyJournal(path, RETENTION_MS, () => now);
    assert.equal((await second.claim('done', 'd1', 5_000)).kind, 'completed');
    assert.equal((await second.claim('done', 'other', 5_000)).kind, 'reused');
    assert.equal((await second.claim('running', 'd2', 5_000)).kind, 'in_progress', 'its holder may still be settling');
    now += 6_000;
    assert.equal((await second.claim('running', 'd2', 5_000)).kind, 'unknown', 'never run again');
    assert.equal((await second.claim('freed', 'd3', 5_000)).kind, 'acquired', 'a released key is free');
    now += RETENTION_MS;
    assert.equal((await second.claim('done', 'd1', 5_000)).kind, 'acquired', 'retention passed');
    await second.close();
    await first.close();
  });

  it('skips a line torn by a crash, and starts from the journal rewritten with the live records only', async () => {
    const path = join(dir, 'b.journal');
    const s = await openIdempotencyJournal(path, RETENTION_MS);
    for (let i = 0; i < 50; i++) {
      const c = await s.claim(`k${i}`, 'd', 5_000);
      await s.settle(`k${i}`, (c as { token: string }).token, { kind: i % 2 === 0 ? 'released' : 'unknown' });
    }
    await s.close();
    await appendFile(path, '{"k":"torn","h":{"rec');
    const before = (await stat(path)).size;
    const again = await openIdempotencyJournal(path, RETENTION_MS);
    assert.equal((await again.claim('k1', 'd', 5_000)).kind, 'unknown');
    assert.equal((await again.claim('k0', 'd', 5_000)).kind, 'acquired');
    assert.equal((await again.claim('torn', 'd', 5_000)).kind, 'acquired');
    await again.close();
    assert.ok((await stat(path)).size < before, 'rewritten with the 25 live records');
    assert.doesNotMatch(await readFile(path, 'utf8'), /torn","h":\{"rec\n/);
  });

  it('refuses to start when the journal cannot be read or written, naming the setting', async () => {
    const notAFile = join(dir, 'a-directory');
    await mkdir(notAFile);
    await assert.rejects(
      openIdempotencyJournal(notAFile, RETENTION_MS),
      (e: unknown) => e instanceof StartupError && /TOOLGATE_IDEMPOTENCY_FILE/.test(e.message),
    );
    await assert.rejects(
      openIdempotencyJournal(join(dir, 'missing-dir', 'x.journal'), RETENTION_MS),
      (e: unknown) => e instanceof StartupError && /TOOLGATE_IDEMPOTENCY_FILE/.test(e.message),
    );
  });
});

describe('one toolgate process without Redis, its records in a journal file: the SIGKILL loop', () => {
  const KILLS = 20;
  const CALLS = 16;
  let dir: string;
  let upstream: CountingUpstream;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-idem-kill-'));
    await writeFile(join(dir, 'keys.yaml'), KEYS_YAML);
    await writeFile(join(dir, 'policy.yaml'), executionPolicy(''));
    upstream = await startCountingUpstream();
  });
  after(async () => {
    await upstream?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it(`never runs a keyed non_idempotent_write twice across ${KILLS} SIGKILLs and restarts (${KILLS * CALLS} calls)`, async () => {
    const flags = ['--policy-file', join(dir, 'policy.yaml'), '--idempotency-file', join(dir, 'idempotency.journal')];
    const result = await runKillTrials({
      kills: KILLS,
      callsPerKill: CALLS,
      upstream,
      headers: { authorization: `Bearer ${AGENT_KEY}` },
      callMs: 200,
      respawn: (): Promise<ToolgateProcess> => startToolgateProcess(upstream.origin, flags),
    });
    assert.equal(result.doubleExecutions, 0, JSON.stringify(result));
    for (const answer of Object.keys(result.answers))
      assert.ok(SAFE_ANSWERS.has(answer), JSON.stringify(result.answers));
    console.log(
      `kill loop without Redis: ${result.trials} keyed calls, ${result.kills} SIGKILLs, ${result.doubleExecutions} double executions, answers ${JSON.stringify(result.answers)}`,
    );
  });

  it('without a journal (and without Redis) every keyed non_idempotent_write is refused, none run, across SIGKILLs; other tools keep their records', async () => {
    const flags = ['--policy-file', join(dir, 'policy.yaml')];
    const executions = upstream.executions();
    const result = await runKillTrials({
      kills: 3,
      callsPerKill: CALLS,
      upstream,
      headers: { authorization: `Bearer ${AGENT_KEY}` },
      callMs: 200,
      respawn: (): Promise<ToolgateProcess> => startToolgateProcess(upstream.origin, flags),
    });
    assert.deepEqual(
      result.answers,
      { idempotency_not_durable: 3 * CALLS },
      'every repeat refused with the documented code',
    );
    assert.equal(upstream.executions(), executions, 'and nothing ran, first calls included');
    upstream.behaviour.delayMs = 0;
    const gate = await startToolgateProcess(upstream.origin, flags);
    try {
      const canary = 'canary-not-durable-5e1a';
      const refused = await post(gate.url, toolCall(1, 'refund_payment', { note: canary }), {
        authorization: `Bearer ${AGENT_KEY}`,
        'idempotency-key': 'nd-1',
      });
      refusedCall(refused, 'idempotency_not_durable');
      assert.match(refusalOf(refused)?.text ?? '', /operator must give toolgate a journal file or Redis/);
      assert.ok(!refused.text.includes(canary) && !refused.text.includes('nd-1'), 'nothing echoed');
      const read = { authorization: `Bearer ${AGENT_KEY}`, 'idempotency-key': 'nd-2' };
      assert.ok(passed(await post(gate.url, toolCall(2, 'read_status', {}), read)));
      assert.equal(
        (await post(gate.url, toolCall(3, 'read_status', {}), read)).headers['idempotent-replayed'],
        'true',
        'a read keeps its in-process record',
      );
      assert.ok(
        passed(await post(gate.url, toolCall(4, 'refund_payment', {}), { authorization: `Bearer ${AGENT_KEY}` })),
        'an unkeyed call runs as before',
      );
    } finally {
      await gate.close();
    }
  });
});
