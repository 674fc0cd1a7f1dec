import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateWith, type PolicyGate } from '../helpers/policy-gate.ts';
import { post, type RawResponse } from '../helpers/raw.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { sha256 } from '../helpers/static-keys.ts';
import { TASK_SECRET_2026, startTasksServerV2, type TasksServerV2 } from '../helpers/tasks-server-v2.ts';
import { TASKS_EXTENSION } from '../helpers/tasks-extension.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';
import { waitFor } from '../helpers/wait.ts';

const ALICE = 'alice-task26-key-0a1b2c3d';
const BOB = 'bob-task26-key-4e5f6a7b';
const NOBODY = 'nobody-task26-key-8c9d0e1f';
const NO_SUCH_TASK = 'task-that-nobody-created-0000';

const KEYS = `keys:
  - { sha256: ${sha256(ALICE)}, principal: alice }
  - { sha256: ${sha256(BOB)}, principal: bob }
  - { sha256: ${sha256(NOBODY)}, principal: nobody }
`;

/** bob may call both tools, so only the binding keeps him from alice's tasks; alice's grants are what a reload revokes. */
const policy = (aliceMayReport: boolean) => `
version: 1
authentication:
  staticKeys: { file: keys.yaml }
tools:
  report: { results: { redact: [email] } }
grants:
  - { principal: bob, tool: report, effect: allow }
  - { principal: bob, tool: slow_report, effect: allow }
${aliceMayReport ? '  - { principal: alice, tool: report, effect: allow }\n  - { principal: alice, tool: slow_report, effect: allow }' : ''}
`;

const NAMED: ReadonlySet<string> = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

/**
 * A 2026-07-28 request as a client declaring the tasks extension sends it:
 * the `_meta` envelope, MCP-Protocol-Version, Mcp-Method and, for a tool or
 * a task, Mcp-Name. Raw HTTP: the v2 client has no API for the tasks methods.
 */
function send(url: string, key: string, method: string, params: Record<string, unknown>, id = 1): Promise<RawResponse> {
  const name = method === 'tools/call' ? params.name : NAMED.has(method) ? params.taskId : undefined;
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'tasks-it', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
  };
  return post(url, JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta } }), {
    authorization: `Bearer ${key}`,
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(typeof name === 'string' && { 'mcp-name': name }),
  });
}

async function startTask(url: string, key: string, tool: string, topic = 'q3'): Promise<string> {
  const r = await send(url, key, 'tools/call', { name: tool, arguments: { topic } });
  assert.equal(r.status, 200, r.text);
  const result = r.json().result as { resultType?: string; taskId?: string } | undefined;
  assert.equal(result?.resultType, 'task', r.text);
  assert.equal(typeof result.taskId, 'string', r.text);
  return result.taskId as string;
}

/** Asks for the task as `key`, with the same request id as for an id nobody created: the answers must be the same bytes. */
async function assertUnknown(url: string, key: string, method: string, taskId: string): Promise<void> {
  const params = (id: string) => (method === 'tasks/update' ? { taskId: id, inputResponses: {} } : { taskId: id });
  const theirs = await send(url, key, method, params(taskId), 7);
  const none = await send(url, key, method, params(NO_SUCH_TASK), 7);
  assert.equal(theirs.status, 200, theirs.text);
  assert.equal(theirs.json().error?.code, -32602, theirs.text);
  assert.equal(theirs.json().error?.data?.code, 'task_not_found', theirs.text);
  assert.equal(theirs.status, none.status);
  assert.equal(theirs.headers['content-type'], none.headers['content-type']);
  assert.equal(theirs.text, none.text, `${method}: another principal's task is answered like no task at all`);
  assertNoTaskContent(theirs, taskId);
}

function assertNoTaskContent(r: RawResponse, taskId: string): void {
  assert.ok(!r.text.includes(taskId) && !r.text.includes(TASK_SECRET_2026), r.text);
}

function detailed(r: RawResponse): { status?: string; result?: unknown } {
  assert.equal(r.status, 200, r.text);
  return r.json().result ?? {};
}

describe('2026-07-28 tasks extension: tasks bound to the principal that created them (v2 SDK server)', () => {
  let h: PolicyGate<TasksServerV2>;

  before(async () => {
    h = await startGateWith(startTasksServerV2, { 'keys.yaml': KEYS, 'policy.yaml': policy(true) });
  });
  after(async () => {
    await h?.close();
  });

  it('gives the creator its task, and everyone else the unknown-task answer, without asking the server', async () => {
    const { gate, upstream } = h;
    const taskId = await startTask(gate.url, ALICE, 'report');
    const done = detailed(await send(gate.url, ALICE, 'tasks/get', { taskId }));
    assert.equal(done.status, 'completed');
    assert.match(JSON.stringify(done.result), new RegExp(TASK_SECRET_2026));

    const seenBefore = upstream.seen.length;
    for (const key of [BOB, NOBODY]) {
      for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel'])
        await assertUnknown(gate.url, key, method, taskId);
    }
    assert.deepEqual(
      upstream.seen.slice(seenBefore),
      [],
      "no request about another principal's task reached the server",
    );

    // The extension has no tasks/list: the server's -32601 reaches every caller as it is, naming no task.
    const list = await send(gate.url, BOB, 'tasks/list', {});
    assert.equal(list.json().error?.code, -32601, list.text);
    assertNoTaskContent(list, taskId);
  });

  it("guards a finished task's result inlined in tasks/get with the tool's results section", async () => {
    const { gate } = h;
    const taskId = await startTask(gate.url, ALICE, 'report', 'ada@example.org');
    const r = await send(gate.url, ALICE, 'tasks/get', { taskId });
    const done = detailed(r);
    assert.equal(done.status, 'completed', r.text);
    assert.ok(!r.text.includes('ada@example.org'), r.text);
    assert.match(JSON.stringify(done.result), new RegExp(`\\[redacted: email\\] ${TASK_SECRET_2026}`));
  });

  it('answers what the extension says a server answers before any task is looked up, to the creator and everyone alike', async () => {
    const { gate, upstream } = h;
    const taskId = await startTask(gate.url, ALICE, 'report');
    const seenBefore = upstream.seen.length;
    // The extension removed tasks/result: -32601 at HTTP 404 (SEP-2575), as the server says it, for every id and every caller.
    const answers = await Promise.all(
      [ALICE, BOB].flatMap((key) =>
        [taskId, NO_SUCH_TASK].map((id) => send(gate.url, key, 'tasks/result', { taskId: id }, 9)),
      ),
    );
    for (const r of answers) {
      assert.equal(r.status, 404, r.text);
      assert.equal(r.json().error?.code, -32601, r.text);
      assert.equal(r.text, answers[0]?.text);
      assertNoTaskContent(r, taskId);
    }
    // A request about a task that does not declare the extension: -32021 naming what to declare, whoever asks.
    for (const key of [ALICE, BOB]) {
      for (const id of [taskId, NO_SUCH_TASK]) {
        const raw = await post(
          gate.url,
          JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId: id } }),
          {
            authorization: `Bearer ${key}`,
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': 'tasks/get',
            'mcp-name': id,
          },
        );
        const error = raw.json().error;
        assert.equal(error?.code, -32021, raw.text);
        assert.deepEqual(error?.data?.requiredCapabilities, { extensions: { [TASKS_EXTENSION]: {} } });
        assertNoTaskContent(raw, taskId);
      }
    }
    assert.deepEqual(upstream.seen.slice(seenBefore), [], 'none of them reached the server');
  });

  it('refuses a creator whose grant was revoked on get and update, and still lets it cancel', async () => {
    const { gate, dir } = h;
    const done = await startTask(gate.url, ALICE, 'report');
    const running = await startTask(gate.url, ALICE, 'slow_report');
    await writeFile(join(dir, 'policy.yaml'), policy(false));
    try {
      await waitFor(
        async () =>
          (await send(gate.url, ALICE, 'tasks/get', { taskId: done })).json().error?.data?.code === 'tool_not_granted',
        "the reload revokes alice's grants",
        10_000,
      );
      for (const [method, params] of [
        ['tasks/get', { taskId: done }],
        ['tasks/update', { taskId: running, inputResponses: {} }],
      ] as const) {
        const refused = await send(gate.url, ALICE, method, params);
        assert.equal(refused.status, 200, refused.text);
        assert.equal(refused.json().error?.data?.code, 'tool_not_granted', refused.text);
        assertNoTaskContent(refused, params.taskId);
      }
      const ack = detailed(await send(gate.url, ALICE, 'tasks/cancel', { taskId: running })) as Record<string, unknown>;
      assert.equal(ack.resultType, 'complete');
      assert.ok(!('status' in ack), 'a cancel is acknowledged with an empty result');
    } finally {
      await writeFile(join(dir, 'policy.yaml'), policy(true));
    }
    await waitFor(
      async () => (await send(gate.url, ALICE, 'tasks/get', { taskId: running })).json().result !== undefined,
      'the grants are back',
      10_000,
    );
    assert.equal(
      detailed(await send(gate.url, ALICE, 'tasks/get', { taskId: running })).status,
      'cancelled',
      'the cancel reached the server',
    );
  });
});

describe('2026-07-28 tasks bound through Redis, across two replicas', () => {
  let redis: RedisServer;
  let h: PolicyGate<TasksServerV2>;
  let other: RunningToolgate;

  before(async () => {
    redis = await startRedis();
    const shared = ['--redis-url', redis.url, '--policy-domain', 'tasks-2026-it'];
    h = await startGateWith(startTasksServerV2, { 'keys.yaml': KEYS, 'policy.yaml': policy(true) }, shared);
    other = await startToolgate(h.upstream.origin, ['--policy-file', join(h.dir, 'policy.yaml'), ...shared]);
    await other.ready;
  });
  after(async () => {
    await other?.close();
    await h?.close();
    await redis?.close();
  });

  it('answers the creator on the other replica, and a stranger not found on both', async () => {
    const taskId = await startTask(h.gate.url, ALICE, 'report');
    const done = detailed(await send(other.url, ALICE, 'tasks/get', { taskId }));
    assert.equal(done.status, 'completed');
    assert.match(JSON.stringify(done.result), new RegExp(TASK_SECRET_2026));
    const seenBefore = h.upstream.seen.length;
    for (const url of [h.gate.url, other.url]) {
      for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) await assertUnknown(url, BOB, method, taskId);
    }
    assert.deepEqual(h.upstream.seen.slice(seenBefore), []);
  });

  it('fails closed with a retryable 503 while Redis is unreachable', async () => {
    const taskId = await startTask(h.gate.url, ALICE, 'report');
    await redis.close();
    for (const url of [h.gate.url, other.url]) {
      for (const key of [ALICE, BOB]) {
        const r = await send(url, key, 'tasks/get', { taskId });
        assert.equal(r.status, 503, r.text);
        assert.equal(r.headers['retry-after'], '1');
        assert.equal(r.json().error?.data?.code, 'tasks_unavailable', r.text);
        assert.equal(r.json().error?.data?.retryable, true);
        assertNoTaskContent(r, taskId);
      }
    }
  });
});
