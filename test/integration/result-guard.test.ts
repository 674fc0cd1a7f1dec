import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Listening } from '../helpers/http-server.ts';
import { connectModernClient } from '../helpers/mcp-v2-server.ts';
import { metricValue } from '../helpers/metrics.ts';
import { startGateWith, type PolicyGate } from '../helpers/policy-gate.ts';
import {
  HUGE_BYTES,
  INJECTION,
  LEAKS,
  startDrippingUpstream,
  startResultV1Server,
  startResultV2Server,
} from '../helpers/result-guard-server.ts';
import { post } from '../helpers/raw.ts';
import { waitFor } from '../helpers/wait.ts';

const TOOLS = ['leaky', 'poisoned_mark', 'poisoned_block', 'huge', 'profile', 'contact', 'clean', 'leaky_audit'];

const POLICY = `
version: 1
authentication:
  anonymous: { enabled: true }
grants:
${TOOLS.map((t) => `  - { principal: anonymous, tool: ${t}, effect: allow }`).join('\n')}
tools:
  leaky: { sideEffect: idempotent_write, results: { redact: [aws_access_key, email, payment_card] } }
  leaky_audit: { results: { redact: [email], enforcement: audit } }
  poisoned_mark: { results: { injection: mark } }
  poisoned_block: { results: { injection: block } }
  huge: { results: { maxBytes: 4096 } }
  profile: { results: { redact: [email] } }
  contact: { results: { redact: [email] } }
`;

interface CallResult {
  readonly content: readonly { readonly type: string; readonly text?: string }[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
  readonly _meta?: Record<string, unknown>;
}

type Call = (name: string, meta?: Record<string, unknown>) => Promise<CallResult>;

const errorCode = (r: CallResult) => (r._meta?.['io.toolgate/error'] as { code?: string } | undefined)?.code;
const texts = (r: CallResult) => r.content.map((c) => c.text ?? '').join('\n');

/** Nothing a guard kept back may reach the client, in any part of the answer. */
function leaksNothing(r: CallResult, ...secrets: string[]): void {
  const all = JSON.stringify(r);
  for (const s of secrets) assert.ok(!all.includes(s), `the answer still carries ${s.slice(0, 20)}`);
}

/** The same cases against each upstream and client: the guard must not depend on the wire. */
function guardCases(
  label: string,
  open: () => Promise<{ gate: PolicyGate<Listening>; call: Call; close(): Promise<void> }>,
): void {
  describe(`result guard: ${label}`, () => {
    let setup: Awaited<ReturnType<typeof open>>;
    before(async () => {
      setup = await open();
    });
    after(async () => {
      await setup.close();
    });

    it('redacts keys, addresses and card numbers with typed markers, and says so in _meta', async () => {
      const r = await setup.call('leaky');
      assert.equal(r.isError ?? false, false);
      assert.equal(texts(r), 'key [redacted: aws_access_key], owner [redacted: email], card [redacted: payment_card]');
      assert.deepEqual(r._meta?.['io.toolgate/result-guard'], {
        redacted: { aws_access_key: 1, email: 1, payment_card: 1 },
      });
      leaksNothing(r, LEAKS.aws, LEAKS.email, LEAKS.card);
    });

    it('marks a text that reads as instructions, and only that text', async () => {
      const r = await setup.call('poisoned_mark');
      assert.equal(r.isError ?? false, false);
      const [first, second] = r.content.map((c) => c.text ?? '');
      assert.match(
        first ?? '',
        /^\[toolgate ([0-9a-f]{8}): untrusted tool output follows\. .*\(instruction-override[^)]*\).*\]\n/,
      );
      const nonce = /^\[toolgate ([0-9a-f]{8}):/.exec(first ?? '')?.[1];
      assert.ok((first ?? '').endsWith(`\n[toolgate ${nonce}: end of untrusted tool output]`));
      assert.ok((first ?? '').includes(INJECTION), 'mark keeps the text, wrapped');
      assert.equal(second, 'an honest second block');
      const said = r._meta?.['io.toolgate/result-guard'] as { marked?: string[] } | undefined;
      assert.ok(said?.marked?.includes('instruction-override'));
    });

    it('blocks a result that reads as instructions, naming rules and never the text', async () => {
      const r = await setup.call('poisoned_block');
      assert.equal(r.isError, true);
      assert.equal(errorCode(r), 'result_blocked');
      assert.match(
        texts(r),
        /withheld the tool's result: it contains text that reads as instructions to you \(.*instruction-override/,
      );
      leaksNothing(r, INJECTION, 'id_rsa');
    });

    it('cuts a result over maxBytes, saying how large it may be', async () => {
      const r = await setup.call('huge');
      assert.equal(r.isError, true);
      assert.equal(errorCode(r), 'result_too_large');
      assert.match(texts(r), /more than the 4096 bytes the policy lets through/);
      assert.ok(JSON.stringify(r).length < 2000);
      assert.ok(HUGE_BYTES > 4096);
    });

    it('redacts structuredContent and keeps it valid against the outputSchema', async () => {
      const r = await setup.call('profile');
      assert.equal(r.isError ?? false, false);
      assert.deepEqual(r.structuredContent, { note: 'write to [redacted: email]' });
      leaksNothing(r, LEAKS.email);
    });

    it('withholds a result whose redaction would break the outputSchema', async () => {
      const r = await setup.call('contact');
      assert.equal(r.isError, true);
      assert.equal(errorCode(r), 'result_not_guardable');
      leaksNothing(r, LEAKS.email);
    });

    it("judges an idempotent replay again: the stored result is the upstream's", async () => {
      const key = { 'io.toolgate/idempotencyKey': `replay-${label.length}` };
      const first = await setup.call('leaky', key);
      const again = await setup.call('leaky', key);
      assert.equal(again._meta?.['io.toolgate/replayed'], true);
      assert.equal(texts(again), texts(first));
      leaksNothing(again, LEAKS.aws, LEAKS.email, LEAKS.card);
    });

    it('under enforcement: audit, records what it would redact and passes the result unchanged', async () => {
      const r = await setup.call('leaky_audit');
      assert.equal(texts(r), `owner ${LEAKS.email}`);
      assert.equal(
        await metricValue(setup.gate.gate.adminUrl, 'toolgate_result_guard_total', {
          tool: 'leaky_audit',
          detector: 'email',
          action: 'would_redact',
        }),
        1,
      );
    });

    it('passes a clean result untouched', async () => {
      const r = await setup.call('clean');
      assert.equal(texts(r), 'nothing to see');
      assert.equal(r._meta?.['io.toolgate/result-guard'], undefined);
    });

    it('counts and audits each action by detector, without content', async () => {
      const { gate } = setup;
      assert.ok(
        (await metricValue(gate.gate.adminUrl, 'toolgate_result_guard_total', {
          tool: 'leaky',
          detector: 'aws_access_key',
          action: 'redact',
        })) >= 1,
      );
      assert.ok(
        (await metricValue(gate.gate.adminUrl, 'toolgate_result_guard_total', {
          tool: 'huge',
          detector: 'max_bytes',
          action: 'cut',
        })) >= 1,
      );
      assert.ok(
        (await metricValue(gate.gate.adminUrl, 'toolgate_result_guard_total', {
          tool: 'poisoned_block',
          detector: 'instruction-override',
          action: 'block',
        })) >= 1,
      );
      // A withheld result is that request's outcome, as any refusal is; a redacted one was forwarded.
      for (const outcome of ['result_blocked', 'result_too_large', 'result_not_guardable']) {
        assert.equal(
          await metricValue(gate.gate.adminUrl, 'toolgate_requests_total', { method: 'tools/call', outcome }),
          1,
          outcome,
        );
      }
      const audit = join(gate.dir, 'audit.log');
      let lines: string[] = [];
      await waitFor(async () => {
        const text = await readFile(audit, 'utf8').catch(() => '');
        lines = text.split('\n').filter((l) => l.includes('"result_guard"'));
        return lines.length >= 5;
      }, 'five audit events with result_guard');
      for (const line of lines) {
        for (const secret of [LEAKS.aws, LEAKS.email, LEAKS.card, INJECTION.slice(0, 30), 'x'.repeat(100)])
          assert.ok(!line.includes(secret), 'an audit line carries content');
      }
      const leaky = lines
        .map((l) => JSON.parse(l) as { resources?: { name?: string }[]; unmapped?: { result_guard?: unknown } })
        .find((e) => e.resources?.some((r) => r.name === 'leaky'));
      assert.deepEqual(leaky?.unmapped?.result_guard, {
        mode: 'enforce',
        hits: [
          { detector: 'aws_access_key', action: 'redact', count: 1 },
          { detector: 'email', action: 'redact', count: 1 },
          { detector: 'payment_card', action: 'redact', count: 1 },
        ],
      });
    });
  });
}

const auditLog = (dir: string) => ['--audit-log', join(dir, 'audit.log')];

/** Either SDK's client calls a tool the same way; what the cases use of it. */
function calling(
  gate: PolicyGate<Listening>,
  client: {
    callTool(params: {
      name: string;
      arguments: Record<string, unknown>;
      _meta?: Record<string, unknown>;
    }): Promise<unknown>;
    close(): Promise<void>;
  },
) {
  return {
    gate,
    call: async (name: string, meta?: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: {}, ...(meta !== undefined && { _meta: meta }) })) as CallResult,
    async close() {
      await client.close();
      await gate.close();
    },
  };
}

async function v1Client(url: string): Promise<Client> {
  const client = new Client({ name: 'result-guard-it', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  // The v1 client validates structuredContent against the outputSchema it listed: a real check of the promise kept.
  await client.listTools();
  return client;
}

for (const json of [false, true]) {
  guardCases(`v1 SDK server answering with ${json ? 'JSON' : 'an event stream'}, v1 client (2025-11-25)`, async () => {
    const gate = await startGateWith(() => startResultV1Server(json), { 'policy.yaml': POLICY }, auditLog);
    return calling(gate, await v1Client(gate.gate.url));
  });
}

guardCases('v2 SDK server, v2 client pinned to 2026-07-28', async () => {
  const gate = await startGateWith(startResultV2Server, { 'policy.yaml': POLICY }, auditLog);
  const client = await connectModernClient(gate.gate.url);
  await client.listTools();
  return calling(gate, client);
});

describe('result guard: a streamed answer over the bound', () => {
  it('passes the events before it, ends the stream with the refusal, and hangs up on the upstream', async () => {
    const policy =
      'version: 1\nauthentication:\n  anonymous: { enabled: true }\ngrants:\n  - { principal: anonymous, tool: drip, effect: allow }\ntools:\n  drip: { results: { maxBytes: 16384 } }\n';
    const setup = await startGateWith(startDrippingUpstream, { 'policy.yaml': policy });
    try {
      const call = JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'drip', arguments: {} },
      });
      const r = await post(setup.gate.url, call, { 'mcp-protocol-version': '2025-11-25' });
      assert.equal(r.status, 200);
      const events = r.text
        .split('\n\n')
        .filter((e) => e.startsWith('data: '))
        .map((e) => JSON.parse(e.slice(6)) as { id?: number; method?: string; result?: CallResult });
      assert.deepEqual(
        events.map((e) => e.method ?? e.id),
        ['notifications/message', 7],
      );
      const last = events.at(-1)?.result;
      assert.equal(last?.isError, true);
      assert.equal(last === undefined ? undefined : errorCode(last), 'result_too_large');
      assert.ok(r.text.length < 4096, 'nothing of the oversized event reached the client');
      await waitFor(() => setup.upstream.abandoned() === 1, 'the upstream to see toolgate hang up');
    } finally {
      await setup.close();
    }
  });
});
