import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createDemoServer } from '../../src/demo/server.ts';

const CLI = join(import.meta.dirname, '../../src/cli.ts');
const ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TOOLGATE_')));

const server = createDemoServer();
let origin: string;
before(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

/** Asynchronous: the MCP server answering the command lives in this process. */
async function toolgate(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = await once(child, 'exit');
  return { code, stdout, stderr };
}

const tools = (stdout: string): string[] =>
  stdout
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { tool: string }).tool);

test("contracts --upstream is the origin, as for the sidecar, with --mcp-path and the sidecar's variables", async () => {
  for (const [args, env] of [
    [['contracts', 'list', '--upstream', origin], {}],
    [['contracts', 'list', '--upstream', origin, '--mcp-path', '/mcp'], {}],
    [['contracts', 'list'], { TOOLGATE_UPSTREAM: origin, TOOLGATE_MCP_PATH: '/mcp' }],
  ] as const) {
    const r = await toolgate(args, env);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr, '');
    assert.deepEqual(tools(r.stdout), ['get_weather', 'create_ticket', 'convert_currency', 'delete_ticket']);
  }
});

test('the old form, the endpoint URL in --upstream, still works and says how to write it now', async () => {
  const r = await toolgate(['contracts', 'list', '--upstream', `${origin}/mcp`]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stderr,
    `toolgate contracts: --upstream with a path is deprecated: give the origin and the path apart (--upstream ${origin} --mcp-path /mcp)\n`,
  );
  assert.equal(tools(r.stdout).length, 4);
});

test('the sidecar takes the same --upstream and --mcp-path', async () => {
  // A bad path is refused by both with the same words, so the two share one parser.
  for (const args of [
    ['--upstream', origin, '--mcp-path', 'mcp', '--port', '0'],
    ['contracts', 'list', '--upstream', origin, '--mcp-path', 'mcp'],
  ]) {
    const r = await toolgate(args);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /invalid setting --mcp-path: expected an absolute path\n$/);
  }
});
