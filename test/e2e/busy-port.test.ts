import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

const ROOT = join(import.meta.dirname, '../..');
const DEMO_POLICY = join(ROOT, 'examples/demo/policy.yaml');

/** A port someone else holds on loopback, where each toolgate below binds. */
let holder: Server;
let busy: number;

before(async () => {
  holder = createServer().listen(0, '127.0.0.1');
  await once(holder, 'listening');
  busy = (holder.address() as import('node:net').AddressInfo).port;
});
after(() => holder.close());

async function exitOf(script: string, args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [join(ROOT, script), ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = await once(child, 'exit');
  return { code, stderr };
}

/** Every port flag free (0) but the one under test. */
const SIDECAR = [
  '--host',
  '127.0.0.1',
  '--port',
  '0',
  '--admin-port',
  '0',
  '--log-level',
  'error',
  '--upstream',
  'http://127.0.0.1:9',
];

test('every listener of the sidecar and the demo answers a busy port with one line naming its setting', async () => {
  for (const [script, flags, line] of [
    ['src/cli.ts', ['--port', `${busy}`], 'toolgate: port $ is in use (--port / TOOLGATE_PORT)'],
    ['src/cli.ts', ['--admin-port', `${busy}`], 'toolgate: port $ is in use (--admin-port / TOOLGATE_ADMIN_PORT)'],
    [
      'src/cli.ts',
      ['--grpc', 'true', '--grpc-port', `${busy}`],
      'toolgate: port $ is in use (--grpc-port / TOOLGATE_GRPC_PORT)',
    ],
    [
      'src/cli.ts',
      ['--policy-file', DEMO_POLICY, '--approval-port', `${busy}`],
      'toolgate: port $ is in use (--approval-port / TOOLGATE_APPROVAL_PORT)',
    ],
    ['src/demo/run.ts', ['--port', `${busy}`], 'toolgate demo: port $ is in use (--port / TOOLGATE_PORT)'],
  ] as const) {
    const r = await exitOf(script, [...SIDECAR, ...flags]);
    assert.equal(r.code, 2, flags.join(' '));
    assert.equal(r.stderr, `${line.replace('$', `${busy}`)}\n`, flags.join(' '));
  }
});

test("an address that is not the machine's names the host setting", async () => {
  // 192.0.2.0/24 is TEST-NET-1: never an address of this machine.
  const r = await exitOf('src/cli.ts', [...SIDECAR, '--host', '192.0.2.1']);
  assert.equal(r.code, 2);
  assert.equal(r.stderr, 'toolgate: 192.0.2.1 is not an address of this machine (--host / TOOLGATE_HOST)\n');
});
