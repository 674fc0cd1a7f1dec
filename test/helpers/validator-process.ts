import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ValidateRequest__Output } from '../../src/grpc/generated/toolgate/v1/ValidateRequest.ts';

export interface ValidatorProcess {
  /** host:port for the policy's `target`. */
  readonly target: string;
  readonly pid: number;
  /** Every request it received, in order (empty with `quiet`). */
  readonly requests: ValidateRequest__Output[];
  /** Whether it is still running (a CRASH payload ends it). */
  alive(): boolean;
  /** Resolves once the process has exited. */
  exited(): Promise<void>;
  close(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts test/helpers/validator-server.ts as a child process and waits for its port. */
export async function startValidator(options: { quiet?: boolean } = {}): Promise<ValidatorProcess> {
  const child = spawn(
    process.execPath,
    [join(import.meta.dirname, 'validator-server.ts'), ...(options.quiet ? ['--quiet'] : [])],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  running.add(child);
  let exited = false;
  const gone = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      running.delete(child);
      resolve();
    });
  });
  const requests: ValidateRequest__Output[] = [];
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', () => reject(new Error('validator exited before listening')));
    lines.on('line', (line) => {
      const value = JSON.parse(line) as { port?: number };
      if (typeof value.port === 'number' && Object.keys(value).length === 1) resolve(value.port);
      else requests.push(value as ValidateRequest__Output);
    });
  });
  return {
    target: `127.0.0.1:${port}`,
    pid: child.pid as number,
    requests,
    alive: () => !exited,
    exited: () => gone,
    async close() {
      if (exited) return;
      child.kill('SIGTERM');
      await gone;
    },
  };
}
