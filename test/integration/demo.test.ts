import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parse } from 'yaml';
import { stepCommand } from '../../src/demo/commands.ts';
import { startDemo, type Demo } from '../../src/demo/start.ts';
import { DEMO_KEYS, requestBody, requestHeaders, STEPS } from '../../src/demo/steps.ts';
import { runTour, type StepResult } from '../../src/demo/tour.ts';
import { sha256 } from '../helpers/static-keys.ts';

describe('npm run demo: the demo policy, its printed commands and the tour', () => {
  let demo: Demo;
  let results: StepResult[];
  const printed: string[] = [];
  const result = (id: string): StepResult => {
    const found = results.find((r) => r.step.id === id);
    assert.ok(found, `the tour has a step ${id}`);
    return found;
  };

  before(async () => {
    demo = await startDemo(['--port', '0', '--admin-port', '0', '--log-level', 'error'], {});
    results = await runTour(demo, (line) => printed.push(line));
  });
  after(() => demo.close());

  it('takes every step with the outcome its line promised', () => {
    assert.equal(results.length, STEPS.length);
    assert.deepEqual(
      results.filter((r) => !r.ok).map((r) => r.step.id),
      [],
      printed.join('\n'),
    );
    assert.equal(printed.filter((l) => l.includes('NOT as promised')).length, 0);
  });

  it('shows an allowed call, a denied call, a step-up challenge, invalid arguments and a rate limit', () => {
    assert.equal(result('allowed').status, 200);
    assert.match(result('allowed').shown, /Paris: 21°C/);
    assert.equal(result('denied').status, 200);
    assert.match(
      result('denied').shown,
      /^tool_not_granted: "toolgate refused the call: this caller is not granted this tool\./,
    );
    assert.equal(result('elevated').status, 403);
    assert.match(
      result('elevated').shown,
      /^credential_too_weak; WWW-Authenticate: Bearer error="insufficient_user_authentication"/,
    );
    assert.equal(result('invalid').status, 200);
    assert.match(result('invalid').shown, /argument \/title is too short/);
    assert.match(result('invalid').shown, /argument \/priority is not one of the allowed values/);
    assert.doesNotMatch(result('invalid').shown, /urgent/);
    assert.equal(result('rate-limited').status, 200);
    assert.match(
      result('rate-limited').shown,
      /^rate_limited: "toolgate refused the call: too many calls\. Wait \d+ s, then call the tool again\." \(answers before it: (ran ?)+\)$/,
    );
  });

  it('lists only what the caller may call, and finds a deferred tool through search_tools', () => {
    assert.equal(result('list').shown, 'tools: get_weather, search_tools');
    assert.equal(result('search').shown, 'found: convert_currency');
  });

  it('counts each decision in /metrics', () => {
    const shown = result('metrics').shown;
    for (const [stage, outcome] of [
      ['grants', 'tool_not_granted'],
      ['security_level', 'credential_too_weak'],
      ['arguments', 'invalid_arguments'],
      ['rate_limit', 'rate_limited'],
    ]) {
      assert.match(shown, new RegExp(`stage="${stage}",outcome="${outcome}",mode="enforce",rule="[^"]*"\\} 1`), stage);
    }
  });

  it('prints commands that send what the tour sent, and that a shell can take as they are', () => {
    for (const step of STEPS) {
      const command = stepCommand(step, demo);
      if (step.kind === 'metrics') {
        assert.equal(command, `curl -s ${demo.admin}/metrics | grep toolgate_decisions_total`);
        continue;
      }
      assert.ok(!requestBody(step).includes("'"), `${step.id}: the body fits in single quotes`);
      assert.ok(command.includes(`-d '${requestBody(step)}'`), step.id);
      for (const [name, value] of Object.entries(requestHeaders(step)))
        assert.ok(command.includes(`-H '${name}: ${value}'`), `${step.id} ${name}`);
      assert.ok(!command.includes('mcp-session-id'), 'no session id is needed');
    }
  });

  it('prints keys that examples/demo/keys.yaml lists, with their principals and scopes', () => {
    const file = parse(readFileSync(join(import.meta.dirname, '../../examples/demo/keys.yaml'), 'utf8')) as {
      keys: { sha256: string; principal: string; scopes?: string[] }[];
    };
    const listed = file.keys.map((k) => ({ sha256: k.sha256, principal: k.principal, scopes: k.scopes ?? [] }));
    const printedKeys = Object.entries(DEMO_KEYS).map(([principal, k]) => ({
      sha256: sha256(k.key),
      principal,
      scopes: [...k.scopes],
    }));
    assert.deepEqual(listed, printedKeys);
  });

  it('serves 2025-11-25 clients too (v1 SDK, with a session)', async () => {
    const client = new Client({ name: 'demo-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(demo.mcp), {
        requestInit: { headers: { authorization: `Bearer ${DEMO_KEYS.alice.key}` } },
      }),
    );
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((t) => t.name),
        ['get_weather', 'create_ticket', 'search_tools'],
      );
      const answer = await client.callTool({
        name: 'create_ticket',
        arguments: { title: 'Printer on fire', priority: 'high' },
      });
      assert.match(JSON.stringify(answer.content), /\(high\): Printer on fire/);
    } finally {
      await client.close();
    }
  });
});
