/**
 * Human approval end to end, in a real browser: real MCP SDK clients (v1 on
 * 2025-11-25, v2 on 2026-07-28) call a tool that needs approval through
 * toolgate, Debian's headless Chromium (driven by playwright-core) signs in
 * as an approver, reads the arguments on the page and approves or denies,
 * and the clients repeat the call. The upstream counts its runs.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  ALICE_KEY,
  APPROVAL_KEYS_YAML,
  CALLER_KEY,
  approvalPolicy,
  startApprovalUpstream,
  type ApprovalUpstream,
} from '../helpers/approval-upstream.ts';
import { startGateWith, type PolicyGate } from '../helpers/policy-gate.ts';

const CHROMIUM = '/usr/bin/chromium';
const OUTPUT = join(import.meta.dirname, '..', '..', 'test-output', 'approvals');
const HOSTILE_NOTE = '<script>alert(1)</script> "><img src=x onerror=alert(1)>';
const present = existsSync(CHROMIUM);
// In CI the browser is installed by .ci/run: its absence is a failure there, never a skip.
const skip =
  !present && process.env.CI !== 'true'
    ? `${CHROMIUM} is not installed (apt-get install chromium); CI=true makes this a failure`
    : false;

const auth = { headers: { authorization: `Bearer ${CALLER_KEY}` } };

describe('approval in headless Chromium with real MCP SDK clients', { skip }, () => {
  let setup: PolicyGate<ApprovalUpstream>;
  let browser: Browser;
  const runs = () => setup.upstream.executions.get('refund_payment') ?? 0;

  before(async () => {
    assert.ok(present, `${CHROMIUM} is required in CI`);
    mkdirSync(OUTPUT, { recursive: true });
    setup = await startGateWith(
      startApprovalUpstream,
      { 'policy.yaml': approvalPolicy(), 'keys.yaml': APPROVAL_KEYS_YAML },
      ['--approval-port', '0'],
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  after(async () => {
    await browser?.close();
    await setup?.close();
  });

  /** A fresh browser profile signed in with `key`, on the approval page. */
  async function signedIn(url: string, key: string): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    await page.goto(url);
    await page.fill('#credential', key);
    await Promise.all([page.waitForURL(url), page.click('button[type=submit]')]);
    return page;
  }

  async function decide(url: string, key: string, button: 'Approve' | 'Deny'): Promise<Page> {
    const page = await signedIn(url, key);
    await page.getByRole('button', { name: button }).click();
    await page.waitForLoadState();
    return page;
  }

  async function v1Client(): Promise<V1Client> {
    const client = new V1Client({ name: 'e2e-v1', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
    await client.connect(new V1Transport(new URL(setup.gate.url), { requestInit: auth }));
    return client;
  }

  /** A 2026-07-28 client whose elicitation handler is the person: it opens the URL in the browser and decides there. */
  async function v2Client(onUrl: (url: string) => Promise<void>): Promise<V2Client> {
    const client = new V2Client(
      { name: 'e2e-v2', version: '2.0.0' },
      { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      assert.equal(request.params.mode, 'url');
      await onUrl((request.params as { url: string }).url);
      return { action: 'accept' };
    });
    await client.connect(new V2Transport(new URL(setup.gate.url), { requestInit: auth }));
    return client;
  }

  /** A denied approval reaches the model as a tool result saying so, not as a transport exception. */
  function assertDenied(result: unknown): void {
    const r = result as { isError?: boolean; content: { text?: string }[]; _meta?: Record<string, { code?: string }> };
    assert.equal(r.isError, true);
    assert.equal(r._meta?.['io.toolgate/error']?.code, 'approval_denied');
    assert.match(r.content[0]?.text ?? '', /an approver denied it/);
  }

  /**
   * The fixture is a stateless server, so no session carries what the v1
   * client's initialize declared: it is asked as a client without URL
   * elicitation is, with a tool result naming the page.
   */
  async function askedOf(call: Promise<unknown>): Promise<{ url: string; message: string; elicitationId: string }> {
    const r = (await call) as {
      isError?: boolean;
      content: { text?: string }[];
      _meta?: Record<string, { code?: string; url?: string; approvalId?: string }>;
    };
    assert.equal(r.isError, true, 'the call ran without approval');
    const data = r._meta?.['io.toolgate/error'];
    assert.equal(data?.code, 'approval_required');
    return { url: data?.url as string, message: r.content[0]?.text ?? '', elicitationId: data?.approvalId as string };
  }

  it('v1 client (2025-11-25, stateless server): approval_required naming the page → approver signs in, sees the arguments, approves → the repeat runs once; a further repeat needs a new approval', async () => {
    const client = await v1Client();
    const args = { amount: 250, currency: 'EUR', note: HOSTILE_NOTE };
    const first = await askedOf(client.callTool({ name: 'refund_payment', arguments: args }));
    assert.match(first.message, /a person must approve it first\. Ask the user to open http/);
    assert.ok(!first.message.includes('250'));
    const page = await signedIn(first.url, ALICE_KEY);
    // The approver sees exactly the arguments, as text: the hostile note is shown, never run or parsed.
    assert.equal(JSON.parse(await page.locator('#arguments').innerText()).note, HOSTILE_NOTE);
    assert.equal(await page.locator('img').count(), 0);
    const shot = join(OUTPUT, 'approval-page.png');
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`approver page screenshot: ${shot}`);
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForLoadState();
    assert.equal(await page.locator('#state').innerText(), 'approved');
    const before = runs();
    const result = await client.callTool({ name: 'refund_payment', arguments: args });
    assert.deepEqual(result.content, [{ type: 'text', text: 'refunded 250 EUR' }]);
    assert.equal(runs(), before + 1);
    const again = await askedOf(client.callTool({ name: 'refund_payment', arguments: args }));
    assert.notEqual(again.elicitationId, first.elicitationId);
    assert.equal(runs(), before + 1);
    await client.close();
  });

  it('v1 client: a self-approval is refused on the page, and Deny makes the repeat fail with approval_denied', async () => {
    const client = await v1Client();
    const args = { amount: 320, currency: 'EUR' };
    const { url } = await askedOf(client.callTool({ name: 'refund_payment', arguments: args }));
    const self = await decide(url, CALLER_KEY, 'Approve');
    assert.equal(await self.locator('h1').innerText(), 'self_approval_refused');
    await decide(url, ALICE_KEY, 'Deny');
    const before = runs();
    assertDenied(await client.callTool({ name: 'refund_payment', arguments: args }));
    assert.equal(runs(), before);
    await client.close();
  });

  it('v2 client (2026-07-28): input_required with a URL elicitation → the handler approves in the browser → the SDK retries with requestState and the call runs once', async () => {
    const seen: string[] = [];
    const client = await v2Client(async (url) => {
      seen.push(url);
      const page = await decide(url, ALICE_KEY, 'Approve');
      assert.equal(await page.locator('#state').innerText(), 'approved');
    });
    const args = { amount: 410, currency: 'EUR' };
    const before = runs();
    const result = await client.callTool({ name: 'refund_payment', arguments: args });
    assert.deepEqual(result.content, [{ type: 'text', text: 'refunded 410 EUR' }]);
    assert.equal(seen.length, 1);
    assert.equal(runs(), before + 1);
    // The approval is spent: the same call asks again (a new URL).
    await client.callTool({ name: 'refund_payment', arguments: args });
    assert.equal(seen.length, 2);
    assert.notEqual(seen[1], seen[0]);
    assert.equal(runs(), before + 2);
    await client.close();
  });

  it('v2 client: Deny in the browser makes the retried call fail with approval_denied', async () => {
    const client = await v2Client(async (url) => {
      await decide(url, ALICE_KEY, 'Deny');
    });
    const before = runs();
    assertDenied(await client.callTool({ name: 'refund_payment', arguments: { amount: 510, currency: 'EUR' } }));
    assert.equal(runs(), before);
    await client.close();
  });
});
