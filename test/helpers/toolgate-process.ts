import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { waitFor } from './wait.ts';

const CLI = join(import.meta.dirname, '../../src/cli.ts');

export interface ToolgateProcess {
  readonly url: string;
  readonly adminUrl: string;
  readonly child: ChildProcess;
  /** SIGKILL: no drain, no cleanup, as when a node dies. */
  kill(): Promise<void>;
  /** SIGTERM and wait for the exit. */
  close(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Ports are picked free and bound a moment later, so a test running beside
 * this one can take one in between. A replica that exits saying its port is
 * in use is started again on other ports, up to this many times in all.
 */
const ATTEMPTS = 3;
const PORT_IN_USE = /port \d+ is in use/;

interface Launch {
  /** The entry point: src/cli.ts, or a compiled build's. */
  readonly cli: string;
  /** Set in the process's environment, over this one's. */
  readonly env: Readonly<Record<string, string>>;
}

/** A toolgate replica as its own process, ready once /readyz says so. */
export async function startToolgateProcess(
  upstream: string,
  flags: readonly string[],
  launch: Partial<Launch> = {},
): Promise<ToolgateProcess> {
  const how = { cli: launch.cli ?? CLI, env: launch.env ?? {} };
  for (let attempt = 1; ; attempt++) {
    const started = await spawnReplica(how, upstream, flags);
    if (started !== 'port_in_use') return started;
    if (attempt === ATTEMPTS) assert.fail(`toolgate found its port taken ${ATTEMPTS} times`);
  }
}

async function spawnReplica(
  { cli, env }: Launch,
  upstream: string,
  flags: readonly string[],
): Promise<ToolgateProcess | 'port_in_use'> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    [
      cli,
      '--upstream',
      upstream,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--admin-port',
      String(adminPort),
      '--log-level',
      'error',
      '--drain-timeout-ms',
      '1000',
      ...flags,
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ...env },
    },
  );
  let portTaken = false;
  child.stderr?.on('data', (chunk: Buffer) => {
    if (PORT_IN_USE.test(chunk.toString())) portTaken = true;
    process.stderr.write(chunk);
  });
  running.add(child);
  const exited = once(child, 'exit').then(() => running.delete(child));
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  await waitFor(
    async () =>
      child.exitCode !== null ||
      child.signalCode !== null ||
      (await fetch(`${adminUrl}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      )),
    'toolgate process ready',
    60_000,
  );
  if (child.exitCode !== null || child.signalCode !== null) {
    await exited;
    if (portTaken) return 'port_in_use';
    assert.fail(`toolgate exited before it was ready (exit code ${child.exitCode})`);
  }
  const stop = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    adminUrl,
    child,
    kill: () => stop('SIGKILL'),
    close: () => stop('SIGTERM'),
  };
}
