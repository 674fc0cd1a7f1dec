/**
 * A real toolgate process (`node src/cli.ts`), as a pod would run it. Its
 * ports come from its own 'listening' log line; an exit nobody asked for is
 * a crash.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const NODE = join(ROOT, 'node_modules/.bin/node');

export interface GateProcess {
  readonly url: string;
  readonly adminUrl: string;
  /** True once the process exited without being stopped. */
  crashed(): boolean;
  /** Log lines at warn or error, for the report. */
  readonly problems: string[];
  stop(): Promise<void>;
}

/**
 * Chaos tallies each answer by its HTTP status and registry code, so its
 * gates write refusals in protocol form: every refusal keeps its registry
 * status. The decisions are the same in either form; how refusals reach real
 * clients is judged by test/e2e/interop.test.ts.
 */
export const PROTOCOL_FORM = ['--tool-errors', 'protocol'] as const;

export async function startGate(env: Record<string, string>): Promise<GateProcess> {
  const child: ChildProcess = spawn(NODE, [join(ROOT, 'src/cli.ts')], {
    env: {
      PATH: process.env.PATH ?? '',
      TOOLGATE_HOST: '127.0.0.1',
      TOOLGATE_PORT: '0',
      TOOLGATE_ADMIN_PORT: '0',
      TOOLGATE_TOOL_ERRORS: 'protocol',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stopping = false;
  let crashed = false;
  const problems: string[] = [];
  child.once('exit', () => {
    if (!stopping) crashed = true;
  });
  const ports = await new Promise<{ port: number; adminPort: number }>((resolve, reject) => {
    let buffered = '';
    let listening: { port: number; adminPort: number } | undefined;
    const timer = setTimeout(() => reject(new Error('toolgate did not get ready within 30 s')), 30_000);
    child.once('exit', (code) => reject(new Error(`toolgate exited with ${code} at start`)));
    child.stderr?.on('data', (d: Buffer) => {
      buffered += d.toString('utf8');
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        let entry: { msg?: string; level?: string; port?: number; adminPort?: number };
        try {
          entry = JSON.parse(line);
        } catch {
          problems.push(line.slice(0, 300));
          continue;
        }
        if (entry.level === 'warn' || entry.level === 'error') problems.push(line.slice(0, 300));
        if (entry.msg === 'listening') listening = { port: entry.port as number, adminPort: entry.adminPort as number };
        if (entry.msg === 'ready' && listening !== undefined) {
          clearTimeout(timer);
          resolve(listening);
        }
      }
    });
  });
  return {
    url: `http://127.0.0.1:${ports.port}/mcp`,
    adminUrl: `http://127.0.0.1:${ports.adminPort}`,
    crashed: () => crashed,
    problems,
    stop() {
      stopping = true;
      if (child.exitCode !== null) return Promise.resolve();
      return new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    },
  };
}
