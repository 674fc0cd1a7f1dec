import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run as policyCommand } from '../../src/commands/policy.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { V1Server } from '../helpers/mcp-v1-server.ts';
import { startGateWith, type PolicyGate } from '../helpers/policy-gate.ts';
import { post } from '../helpers/raw.ts';
import { sha256 } from '../helpers/static-keys.ts';
import { PROMPT_SECRET, RESOURCE_SECRET, startSurfacesServer } from '../helpers/surfaces-server.ts';
import { waitFor } from '../helpers/wait.ts';

const ALICE = 'alice-key-5c1e8d0b3a2f';
const BOB = 'bob-key-9a7e2c4d6f10';

const POLICY = `
version: 1
authentication:
  staticKeys: { file: keys.yaml }
grants: []
resources:
  grants:
    - { principal: "*", scopes: [docs], uriPrefix: "docs://public", effect: allow, name: public-docs }
    - { principal: "*", scopes: [docs], uri: "docs://public/guide", effect: deny, when: 'principal.id == "bob"', name: no-guide-for-bob }
    - { principal: alice, uriPrefix: "docs://private/", effect: allow }
prompts:
  grants:
    - { principal: "*", scopes: [docs], prompt: greet, effect: allow }
    - { principal: alice, prompt: payroll_report, effect: allow, when: 'prompt.arguments.who == "ada"', name: payroll-for-ada }
`;

const KEYS = `keys:
  - { sha256: ${sha256(ALICE)}, principal: alice, scopes: [docs] }
  - { sha256: ${sha256(BOB)}, principal: bob, scopes: [docs] }
`;

async function connect(url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'surfaces-it', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  return client;
}

/** The McpError a call was refused with; it must carry nothing of the resource or prompt, nor the URI asked for. */
async function refusedWith(p: Promise<unknown>, code: string, asked: string): Promise<McpError> {
  const err = await p.then(
    () => assert.fail(`expected ${code}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof McpError, `a JSON-RPC error the client can read, not ${String(err)}`);
  assert.equal((err.data as { code?: string } | undefined)?.code, code);
  const text = JSON.stringify({ message: err.message, data: err.data });
  for (const secret of [RESOURCE_SECRET, PROMPT_SECRET, asked])
    assert.ok(!text.includes(secret), `the refusal echoes ${secret}`);
  return err;
}

describe('resources, prompts and completions under policy (v1 SDK client and server, 2025-11-25)', () => {
  let setup: PolicyGate<V1Server>;
  let alice: Client;
  let bob: Client;

  before(async () => {
    setup = await startGateWith(startSurfacesServer, { 'policy.yaml': POLICY, 'keys.yaml': KEYS });
    alice = await connect(setup.gate.url, ALICE);
    bob = await connect(setup.gate.url, BOB);
  });
  after(async () => {
    await alice.close();
    await bob.close();
    await setup.close();
  });

  it('reads a granted resource and refuses one no row allows, echoing nothing', async () => {
    const read = await bob.readResource({ uri: 'docs://public/readme' });
    assert.match(JSON.stringify(read.contents), new RegExp(RESOURCE_SECRET));
    const mine = await alice.readResource({ uri: 'docs://private/payroll' });
    assert.match(JSON.stringify(mine.contents), new RegExp(RESOURCE_SECRET));
    const err = await refusedWith(
      bob.readResource({ uri: 'docs://private/payroll' }),
      'resource_not_granted',
      'payroll',
    );
    assert.equal(err.code, -31403);
  });

  it('matches a prefix only at a boundary', async () => {
    await refusedWith(bob.readResource({ uri: 'docs://public-archive/old' }), 'resource_not_granted', 'archive');
  });

  it('lets a deny row whose condition holds win over the allow at its level', async () => {
    const err = await refusedWith(bob.readResource({ uri: 'docs://public/guide' }), 'resource_not_granted', 'guide');
    assert.equal((err.data as { reason?: string }).reason, 'condition');
    const read = await alice.readResource({ uri: 'docs://public/guide' });
    assert.equal(read.contents.length, 1);
  });

  it('refuses a URI outside the normal form before any row is read', async () => {
    for (const uri of [
      'docs://public/%2E%2E/private/payroll',
      'docs://public/../private/payroll',
      'DOCS://public/readme',
      'docs://public/%72eadme',
      'docs://public/a%2F..%2F..%2Fprivate',
    ]) {
      await refusedWith(alice.readResource({ uri }), 'invalid_resource_uri', 'private');
    }
  });

  it('filters resources/list and resources/templates/list per caller, privately', async () => {
    const bobs = await bob.listResources();
    assert.deepEqual(bobs.resources.map((r) => r.uri).sort(), ['docs://public/readme']);
    const alices = await alice.listResources();
    assert.deepEqual(alices.resources.map((r) => r.uri).sort(), [
      'docs://private/payroll',
      'docs://public/guide',
      'docs://public/readme',
    ]);
    assert.equal((bobs as { cacheScope?: string }).cacheScope, 'private');
    const templates = await bob.listResourceTemplates();
    assert.deepEqual(
      templates.resourceTemplates.map((t) => t.uriTemplate),
      ['docs://public/{name}'],
    );
    const all = await alice.listResourceTemplates();
    assert.deepEqual(all.resourceTemplates.map((t) => t.uriTemplate).sort(), [
      'docs://private/{name}',
      'docs://public/{name}',
    ]);
  });

  it('gets a granted prompt, refuses one not granted, and judges conditions on its arguments', async () => {
    const greet = await bob.getPrompt({ name: 'greet', arguments: { who: 'ada' } });
    assert.match(JSON.stringify(greet.messages), new RegExp(PROMPT_SECRET));
    await refusedWith(
      bob.getPrompt({ name: 'payroll_report', arguments: { who: 'ada' } }),
      'prompt_not_granted',
      'payroll_report',
    );
    const ada = await alice.getPrompt({ name: 'payroll_report', arguments: { who: 'ada' } });
    assert.match(JSON.stringify(ada.messages), new RegExp(PROMPT_SECRET));
    const err = await refusedWith(
      alice.getPrompt({ name: 'payroll_report', arguments: { who: 'alan' } }),
      'prompt_not_granted',
      'alan',
    );
    assert.equal((err.data as { reason?: string }).reason, 'condition');
  });

  it('filters prompts/list per caller', async () => {
    assert.deepEqual(
      (await bob.listPrompts()).prompts.map((p) => p.name),
      ['greet'],
    );
    assert.deepEqual((await alice.listPrompts()).prompts.map((p) => p.name).sort(), ['greet', 'payroll_report']);
  });

  it('completes only for prompts and resource templates the caller may get', async () => {
    const ok = await bob.complete({
      ref: { type: 'ref/prompt', name: 'greet' },
      argument: { name: 'who', value: 'a' },
    });
    assert.deepEqual(ok.completion.values.sort(), ['ada', 'alan']);
    await refusedWith(
      bob.complete({ ref: { type: 'ref/prompt', name: 'payroll_report' }, argument: { name: 'who', value: 'a' } }),
      'prompt_not_granted',
      'payroll_report',
    );
    const mine = await alice.complete({
      ref: { type: 'ref/resource', uri: 'docs://private/{name}' },
      argument: { name: 'name', value: 'p' },
    });
    assert.deepEqual(mine.completion.values, ['payroll']);
    await refusedWith(
      bob.complete({
        ref: { type: 'ref/resource', uri: 'docs://private/{name}' },
        argument: { name: 'name', value: 'p' },
      }),
      'resource_not_granted',
      'payroll',
    );
  });

  it('subscribes only to readable resources, and delivers updates only for those', async () => {
    await refusedWith(bob.subscribeResource({ uri: 'docs://private/payroll' }), 'resource_not_granted', 'payroll');
    const updates: string[] = [];
    bob.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    const alicesUpdates: string[] = [];
    alice.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      alicesUpdates.push(n.params.uri);
    });
    await bob.subscribeResource({ uri: 'docs://public/readme' });
    await alice.subscribeResource({ uri: 'docs://public/readme' });
    // The server sends an update for each of its four resources to each subscriber.
    await waitFor(() => alicesUpdates.length === 3, 'alice sees the three resources she may read');
    await waitFor(() => updates.length === 1, 'bob sees the one resource he may read');
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(updates, ['docs://public/readme']);
    assert.deepEqual(alicesUpdates.sort(), ['docs://private/payroll', 'docs://public/guide', 'docs://public/readme']);
  });

  it('decides as the offline doors do: policy explain and the proxy agree on every case', async () => {
    const cases: { who: string; key: string; resource?: string; prompt?: string; args?: Record<string, string> }[] = [
      { who: 'bob', key: BOB, resource: 'docs://private/payroll' },
      { who: 'bob', key: BOB, resource: 'docs://public/guide' },
      { who: 'alice', key: ALICE, resource: 'docs://public/guide' },
      { who: 'bob', key: BOB, resource: 'docs://public-archive/old' },
      { who: 'alice', key: ALICE, resource: 'docs://public/%2E%2E/private/payroll' },
      { who: 'alice', key: ALICE, prompt: 'payroll_report', args: { who: 'alan' } },
      { who: 'alice', key: ALICE, prompt: 'payroll_report', args: { who: 'ada' } },
      { who: 'bob', key: BOB, prompt: 'greet', args: { who: 'ada' } },
    ];
    for (const c of cases) {
      const client = c.key === ALICE ? alice : bob;
      const proxied = await (
        c.resource !== undefined
          ? client.readResource({ uri: c.resource })
          : client.getPrompt({ name: c.prompt as string, arguments: c.args })
      ).then(
        () => 'allow',
        (e: unknown) =>
          `deny ${(e as McpError).data === undefined ? '?' : (e as { data: { code: string } }).data.code}`,
      );
      let out = '';
      const target =
        c.resource !== undefined
          ? ['--resource', c.resource]
          : ['--prompt', c.prompt as string, '--args', JSON.stringify(c.args ?? {})];
      const code = await policyCommand(
        ['explain', join(setup.dir, 'policy.yaml'), '--principal', c.who, '--scopes', 'docs', ...target],
        { stdout: { write: (t: string) => (out += t) }, stderr: { write: () => undefined } },
      );
      assert.equal(code, 0);
      const explained = JSON.parse(out) as { decision: string; reasonCodes: string[] };
      assert.equal(
        explained.decision === 'deny' ? `deny ${explained.reasonCodes[0]}` : explained.decision,
        proxied,
        JSON.stringify(c),
      );
    }
  });

  it('refuses a nameless read or get as a JSON-RPC error at 200', async () => {
    const r = await post(
      setup.gate.url,
      JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'resources/read', params: {} }),
      {
        authorization: `Bearer ${BOB}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
    );
    assert.equal(r.status, 200);
    const body = JSON.parse(r.text) as { error: { data: { code: string } } };
    assert.equal(body.error.data.code, 'invalid_resource_uri');
  });
});
