import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { metricValue } from '../helpers/metrics.ts';
import { post, type RawResponse } from '../helpers/raw.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { sha256 } from '../helpers/static-keys.ts';
import { startTasksServer, TASK_SECRET, type TasksServer } from '../helpers/tasks-server.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';
import { waitFor } from '../helpers/wait.ts';

const ALICE = 'alice-task-key-0a1b2c3d';
const BOB = 'bob-task-key-4e5f6a7b';
const NOBODY = 'nobody-task-key-8c9d0e1f';

const KEYS = `keys:
  - { sha256: ${sha256(ALICE)}, principal: alice, scopes: [reports] }
  - { sha256: ${sha256(BOB)}, principal: bob, scopes: [reports] }
  - { sha256: ${sha256(NOBODY)}, principal: nobody }
`;

const policy = (aliceMayReport: boolean) => `
version: 1
authentication:
  staticKeys: { file: keys.yaml }
tools:
  report: { results: { redact: [email] } }
grants:
  - { principal: bob, tool: report, effect: allow }
  - { principal: alice, tool: slow_report, effect: allow }
${aliceMayReport ? '  - { principal: alice, tool: report, effect: allow }' : ''}
`;

let ids = 0;
const send = (
  gate: RunningToolgate,
  key: string,
  method: string,
  params: Record<string, unknown>,
): Promise<RawResponse> =>
  post(gate.url, JSON.stringify({ jsonrpc: '2.0', id: ++ids, method, params }), {
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
  });

async function startTask(gate: RunningToolgate, key: string, tool: string, topic = 'q3'): Promise<string> {
  const r = await send(gate, key, 'tools/call', { name: tool, arguments: { topic }, task: { ttl: 60_000 } });
  assert.equal(r.status, 200, r.text);
  const taskId = (r.json().result as { task?: { taskId?: string } } | undefined)?.task?.taskId;
  assert.equal(typeof taskId, 'string', r.text);
  return taskId as string;
}

/** The answer a server gives an unknown task id: -32602 at HTTP 200, naming neither the id nor anything of the task. */
function notFound(r: RawResponse, asked: string): { code: number; message: string; data?: unknown } {
  assert.equal(r.status, 200, r.text);
  const error = r.json().error;
  assert.ok(error, r.text);
  assert.equal(error.code, -32602);
  assert.equal(error.data?.code, 'task_not_found');
  assert.ok(!r.text.includes(asked) && !r.text.includes(TASK_SECRET), r.text);
  return error;
}

describe('tasks bound to the principal that created them (v1 SDK tasks server, 2025-11-25)', () => {
  let dir: string;
  let upstream: TasksServer;
  let gate: RunningToolgate;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-tasks-'));
    await writeFile(join(dir, 'keys.yaml'), KEYS);
    await writeFile(join(dir, 'policy.yaml'), policy(true));
    upstream = await startTasksServer();
    gate = await startToolgate(upstream.origin, ['--policy-file', join(dir, 'policy.yaml')]);
    await gate.ready;
  });
  after(async () => {
    await gate?.close();
    await upstream?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("guards a task's result as its tool's own: tasks/result is redacted by the tool's results section", async () => {
    const taskId = await startTask(gate, ALICE, 'report', 'ada@example.org');
    const result = await send(gate, ALICE, 'tasks/result', { taskId });
    assert.equal(result.status, 200, result.text);
    assert.ok(!result.text.includes('ada@example.org'), result.text);
    assert.match(result.text, /\[redacted: email\] task-result-3b9d/);
  });

  it('gives the creator its task, and everyone else the unknown-task answer on get, result, cancel and list', async () => {
    const taskId = await startTask(gate, ALICE, 'report');
    const status = await send(gate, ALICE, 'tasks/get', { taskId });
    assert.equal((status.json().result as { status?: string }).status, 'completed', status.text);
    const result = await send(gate, ALICE, 'tasks/result', { taskId });
    assert.match(result.text, new RegExp(TASK_SECRET));

    const seenBefore = upstream.seen.length;
    for (const key of [BOB, NOBODY]) {
      for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel'])
        notFound(await send(gate, key, method, { taskId }), taskId);
    }
    assert.equal(upstream.seen.length, seenBefore, "no request about another principal's task reached the server");

    // An id nobody created is answered the same: a caller cannot tell a foreign task from none.
    const foreign = notFound(await send(gate, BOB, 'tasks/get', { taskId }), taskId);
    const none = notFound(await send(gate, BOB, 'tasks/get', { taskId: '0'.repeat(32) }), '0'.repeat(32));
    assert.deepEqual(foreign, none);

    const mine = await send(gate, ALICE, 'tasks/list', {});
    assert.ok(
      (mine.json().result as { tasks: { taskId: string }[] }).tasks.some((t) => t.taskId === taskId),
      mine.text,
    );
    const theirs = await send(gate, BOB, 'tasks/list', {});
    assert.deepEqual((theirs.json().result as { tasks: unknown[] }).tasks, [], theirs.text);
    assert.ok(!theirs.text.includes(taskId));
    assert.ok((await metricValue(gate.adminUrl, 'toolgate_tasks_total', { event: 'not_found' })) >= 6);
  });

  it('refuses the result to a creator whose grant for the tool was revoked, and still lets it cancel', async () => {
    const taskId = await startTask(gate, ALICE, 'report');
    const slow = await startTask(gate, ALICE, 'slow_report');
    await writeFile(join(dir, 'policy.yaml'), policy(false));
    await waitFor(
      async () => (await send(gate, ALICE, 'tasks/result', { taskId })).json().error?.data?.code === 'tool_not_granted',
      "the reload revokes alice's report grant",
      10_000,
    );
    const refused = await send(gate, ALICE, 'tasks/get', { taskId });
    assert.equal(refused.status, 200);
    assert.equal(refused.json().error?.data?.code, 'tool_not_granted');
    assert.ok(!refused.text.includes(TASK_SECRET) && !refused.text.includes(taskId));
    const cancelled = await send(gate, ALICE, 'tasks/cancel', { taskId: slow });
    assert.equal((cancelled.json().result as { status?: string } | undefined)?.status, 'cancelled', cancelled.text);
    await writeFile(join(dir, 'policy.yaml'), policy(true));
    await waitFor(
      async () => (await send(gate, ALICE, 'tasks/result', { taskId })).json().result !== undefined,
      'the grant is back',
      10_000,
    );
  });
});

describe('tasks bound through Redis, across two replicas', () => {
  let dir: string;
  let redis: RedisServer;
  let upstream: TasksServer;
  let replicas: RunningToolgate[];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-tasks-redis-'));
    await writeFile(join(dir, 'keys.yaml'), KEYS);
    await writeFile(join(dir, 'policy.yaml'), policy(true));
    redis = await startRedis();
    upstream = await startTasksServer();
    const flags = ['--policy-file', join(dir, 'policy.yaml'), '--redis-url', redis.url, '--policy-domain', 'tasks-it'];
    replicas = [await startToolgate(upstream.origin, flags), await startToolgate(upstream.origin, flags)];
    await Promise.all(replicas.map((r) => r.ready));
  });
  after(async () => {
    await Promise.all(replicas?.map((r) => r.close()) ?? []);
    await upstream?.close();
    await redis?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers the creator on the other replica, and a stranger not found on both', async () => {
    const [one, two] = replicas as [RunningToolgate, RunningToolgate];
    const taskId = await startTask(one, ALICE, 'report');
    assert.match((await send(two, ALICE, 'tasks/result', { taskId })).text, new RegExp(TASK_SECRET));
    for (const r of [one, two]) {
      for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel'])
        notFound(await send(r, BOB, method, { taskId }), taskId);
    }
  });

  it('fails closed with a retryable 503 while Redis is unreachable', async () => {
    const [one] = replicas as [RunningToolgate];
    const taskId = await startTask(one, ALICE, 'report');
    await redis.close();
    const r = await send(one, ALICE, 'tasks/get', { taskId });
    assert.equal(r.status, 503);
    assert.equal(r.headers['retry-after'], '1');
    const error = r.json().error;
    assert.equal(error?.data?.code, 'tasks_unavailable', r.text);
    assert.equal(error?.data?.retryable, true);
    assert.ok(!r.text.includes(taskId));
  });
});
