/**
 * Approvals with real SDK clients and a decision made from the CLI, through
 * one toolgate process sharing a real redis-server: a 2026-07-28 client
 * whose elicitation handler accepts at once waits for the decision instead
 * of looping, a 2025-11-25 client gets -32042 only if its session declared
 * URL elicitation, and a decision made with `toolgate approvals` is audited
 * and counted like one made on the page.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { startEverything, type Running } from '../../bench/conformance/servers.ts';
import { stop } from '../../bench/conformance/processes.ts';
import { run as approvalsCli } from '../../src/commands/approvals.ts';
import {
  APPROVAL_KEYS_YAML,
  CALLER_KEY,
  approvalPolicy,
  startApprovalUpstream,
  type ApprovalUpstream,
} from '../helpers/approval-upstream.ts';
import { metricValue } from '../helpers/metrics.ts';
import { freePort } from '../helpers/ports.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';
import { startToolgateProcess, type ToolgateProcess } from '../helpers/toolgate-process.ts';
import { waitFor } from '../helpers/wait.ts';

const auth = { headers: { authorization: `Bearer ${CALLER_KEY}` } };
const DOMAIN = 'approvals-wait';

interface ToolResult {
  readonly isError?: boolean;
  readonly content: readonly { text?: string }[];
  readonly _meta?: Record<string, { code?: string; url?: string; approvalId?: string } | undefined>;
}

describe('approvals that wait, asked as each client declared, decided from the CLI', () => {
  let dir: string;
  let redis: RedisServer;
  let upstream: ApprovalUpstream;
  let gate: ToolgateProcess;
  const runs = () => upstream.executions.get('refund_payment') ?? 0;
  const cli = async (...argv: string[]) => {
    let out = '';
    const code = await approvalsCli([...argv, '--redis-url', redis.url, '--domain', DOMAIN], {
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: (t: string) => (out += t) },
      env: {},
    });
    assert.equal(code, 0, out);
    return out;
  };
  const audit = async () =>
    (await readFile(join(dir, 'audit.jsonl'), 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { status_code: string; unmapped: Record<string, unknown> });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-approvals-wait-'));
    await writeFile(join(dir, 'keys.yaml'), APPROVAL_KEYS_YAML);
    await writeFile(join(dir, 'policy.yaml'), approvalPolicy());
    await writeFile(join(dir, 'approval.key'), randomBytes(32).toString('base64'));
    redis = await startRedis();
    upstream = await startApprovalUpstream();
    gate = await startToolgateProcess(upstream.origin, [
      '--policy-file',
      join(dir, 'policy.yaml'),
      '--redis-url',
      redis.url,
      '--policy-domain',
      DOMAIN,
      '--approval-secret-file',
      join(dir, 'approval.key'),
      '--approval-port',
      String(await freePort()),
      '--audit-log',
      join(dir, 'audit.jsonl'),
    ]);
  });
  after(async () => {
    await gate?.close();
    await upstream?.close();
    await redis?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('2026-07-28, a handler that accepts before anyone decided: the call waits, then runs once after one CLI approval', async () => {
    const asked: string[] = [];
    const client = new V2Client(
      { name: 'eager', version: '2' },
      { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      const url = (request.params as { url: string }).url;
      asked.push(url);
      // The approver decides a second later, from the CLI: the handler does not wait for it.
      if (asked.length === 1)
        setTimeout(() => void cli('approve', url.slice(url.lastIndexOf('/') + 1), '--as', 'alice'), 1000);
      return { action: 'accept' };
    });
    await client.connect(new V2Transport(new URL(gate.url), { requestInit: auth }));
    try {
      const before = runs();
      const result = (await client.callTool({
        name: 'refund_payment',
        arguments: { amount: 250, currency: 'EUR' },
      })) as ToolResult;
      assert.notEqual(result.isError, true, JSON.stringify(result));
      assert.deepEqual(result.content, [{ type: 'text', text: 'refunded 250 EUR' }]);
      assert.equal(runs(), before + 1, 'one execution');
      assert.equal(asked.length, 1, 'one elicitation, one decision: no rounds in milliseconds');
      const id = (asked[0] as string).slice((asked[0] as string).lastIndexOf('/') + 1);
      let mine: Awaited<ReturnType<typeof audit>> = [];
      await waitFor(
        async () => (mine = (await audit()).filter((e) => e.unmapped.approval_id === id)).length === 3,
        'three audit events',
      );
      assert.deepEqual(
        mine.map((e) => e.status_code),
        ['approval_requested', 'approval_approved', 'approval_spent'],
      );
      assert.equal(mine[1]?.unmapped.approver, 'alice');
      assert.equal(mine[1]?.unmapped.via, 'cli');
      // Shown in the run's output: the audit lines of an approval decided with the CLI (digests, no values).
      for (const e of mine) console.log(`audit: ${JSON.stringify(e)}`);
      console.log(`eager 2026-07-28 handler: ${asked.length} elicitation, ${runs() - before} execution`);
      assert.equal(await metricValue(gate.adminUrl, 'toolgate_approvals_total', { event: 'approved' }), 1);
    } finally {
      await client.close();
    }
  });

  it('2025-11-25 without URL elicitation in initialize: approval_required as a tool result naming the page, never -32042', async () => {
    const client = new V1Client({ name: 'plain', version: '1' });
    await client.connect(new V1Transport(new URL(gate.url), { requestInit: auth }));
    try {
      const r = (await client.callTool({
        name: 'refund_payment',
        arguments: { amount: 260, currency: 'EUR' },
      })) as ToolResult;
      assert.equal(r.isError, true);
      const data = r._meta?.['io.toolgate/error'];
      assert.equal(data?.code, 'approval_required');
      assert.match(
        r.content[0]?.text ?? '',
        new RegExp(`Ask the user to open ${String(data?.url).replace(/[.?]/g, '\\$&')} to approve it`),
      );
      // Denied from the CLI: the repeat is told so, once, and the denial is audited and counted.
      await cli('deny', data?.approvalId as string, '--as', 'alice');
      const denied = (await client.callTool({
        name: 'refund_payment',
        arguments: { amount: 260, currency: 'EUR' },
      })) as ToolResult;
      assert.equal(denied._meta?.['io.toolgate/error']?.code, 'approval_denied');
      await waitFor(
        async () =>
          (await audit()).some(
            (e) =>
              e.unmapped.approval_id === data?.approvalId &&
              e.status_code === 'approval_denied' &&
              e.unmapped.via === 'cli',
          ),
        'the CLI denial audited',
      );
      assert.equal(await metricValue(gate.adminUrl, 'toolgate_approvals_total', { event: 'denied' }), 1);
    } finally {
      await client.close();
    }
  });
});

describe('2025-11-25 sessions in front of a stateful server (server-everything): -32042 only where initialize declared it', () => {
  let dir: string;
  let everything: Running;
  let gate: RunningToolgate;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-approvals-sessions-'));
    await writeFile(join(dir, 'keys.yaml'), APPROVAL_KEYS_YAML);
    await writeFile(
      join(dir, 'policy.yaml'),
      `version: 1
authentication:
  staticKeys: { file: keys.yaml }
grants:
  - { principal: "*", tool: echo, scopes: [payments], effect: require_approval, approval: { approverScope: payments.approve } }
`,
    );
    everything = await startEverything();
    gate = await startToolgate(`http://127.0.0.1:${everything.port}`, [
      '--policy-file',
      join(dir, 'policy.yaml'),
      '--approval-port',
      '0',
    ]);
    await gate.ready;
  });
  after(async () => {
    await gate?.close();
    await stop(everything.child);
    await rm(dir, { recursive: true, force: true });
  });

  it('a session whose initialize declared elicitation.url gets the URLElicitationRequiredError; one that did not gets the tool result', async () => {
    const declared = new V1Client({ name: 'url', version: '1' }, { capabilities: { elicitation: { url: {} } } });
    const plain = new V1Client({ name: 'form-only', version: '1' }, { capabilities: { elicitation: {} } });
    await declared.connect(new V1Transport(new URL(gate.url), { requestInit: auth }));
    await plain.connect(new V1Transport(new URL(gate.url), { requestInit: auth }));
    try {
      await assert.rejects(
        declared.callTool({ name: 'echo', arguments: { message: 'a' } }),
        (e: unknown) => e instanceof UrlElicitationRequiredError && e.elicitations[0]?.mode === 'url',
      );
      const r = (await plain.callTool({ name: 'echo', arguments: { message: 'a' } })) as ToolResult;
      assert.equal(r.isError, true);
      assert.equal(r._meta?.['io.toolgate/error']?.code, 'approval_required');
    } finally {
      await declared.close();
      await plain.close();
    }
  });
});
