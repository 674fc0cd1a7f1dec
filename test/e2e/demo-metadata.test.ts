import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { after, test } from 'node:test';

const RUN = join(import.meta.dirname, '../../src/demo/run.ts');
const demo = spawn(process.execPath, [RUN, '--port', '0', '--admin-port', '0', '--log-level', 'error'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
after(async () => {
  if (demo.exitCode !== null) return;
  demo.kill('SIGTERM');
  await once(demo, 'exit');
});

/** The endpoint the banner prints once the demo is ready. */
const endpoint = new Promise<string>((resolve, reject) => {
  let out = '';
  demo.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    const m = /MCP endpoint {3}(http:\/\/\S+)/.exec(out);
    if (m?.[1] !== undefined) resolve(m[1]);
  });
  demo.once('exit', (code) => reject(new Error(`the demo exited (${code}) before it printed its endpoint: ${out}`)));
});

test("the demo's challenge names a metadata URL with toolgate's port, and it answers 200", async () => {
  const mcp = await endpoint;
  const denied = await fetch(mcp, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(denied.status, 401);
  const url = /resource_metadata="([^"]+)"/.exec(denied.headers.get('www-authenticate') ?? '')?.[1];
  assert.ok(url !== undefined, denied.headers.get('www-authenticate') ?? 'no challenge');
  assert.equal(new URL(url).origin, new URL(mcp).origin, 'the metadata is served where the MCP endpoint is');
  const metadata = await fetch(url);
  assert.equal(metadata.status, 200);
  const doc = (await metadata.json()) as { resource: string; bearer_methods_supported: string[] };
  // RFC 9728: the resource a client checks against the URL it called.
  assert.equal(doc.resource, mcp);
  assert.deepEqual(doc.bearer_methods_supported, ['header']);
});
