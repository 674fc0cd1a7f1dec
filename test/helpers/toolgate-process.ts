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

/** A toolgate replica as its own process (src/cli.ts), ready once /readyz says so. */
export async function startToolgateProcess(upstream: string, flags: readonly string[]): Promise<ToolgateProcess> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [CLI, '--upstream', upstream, '--host', '127.0.0.1', '--port', String(port), '--admin-port', String(adminPort), '--log-level', 'error', '--drain-timeout-ms', '1000', ...flags], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  running.add(child);
  const exited = once(child, 'exit').then(() => running.delete(child));
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  await waitFor(async () => child.exitCode === null && (await fetch(`${adminUrl}/readyz`).then((r) => r.status === 200, () => false)), 'toolgate process ready', 60_000);
  const stop = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return { url: `http://127.0.0.1:${port}/mcp`, adminUrl, child, kill: () => stop('SIGKILL'), close: () => stop('SIGTERM') };
}
