import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Listening } from './http-server.ts';
import { startPolicyServer, type PolicyServer } from './mcp-policy-server.ts';
import { startToolgate, type RunningToolgate } from './toolgate.ts';

export interface PolicyGate<U extends Listening = PolicyServer> {
  /** Where policy.yaml and the other files live; the policy watcher reads it. */
  readonly dir: string;
  readonly upstream: U;
  readonly gate: RunningToolgate;
  close(): Promise<void>;
}

/**
 * toolgate enforcing `files['policy.yaml']` in front of the upstream
 * `startUpstream` starts, with every file written to a fresh directory first
 * (keys, JWKS).
 */
export async function startGateWith<U extends Listening>(
  startUpstream: () => Promise<U>,
  files: Readonly<Record<string, string>>,
  /** Flags, or flags that name files in the gate's own directory. */
  flags: readonly string[] | ((dir: string) => readonly string[]) = [],
): Promise<PolicyGate<U>> {
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-policy-gate-'));
  await Promise.all(Object.entries(files).map(([name, text]) => writeFile(join(dir, name), text)));
  const upstream = await startUpstream();
  const gate = await startToolgate(upstream.origin, [
    '--policy-file',
    join(dir, 'policy.yaml'),
    ...(typeof flags === 'function' ? flags(dir) : flags),
  ]);
  await gate.ready;
  return {
    dir,
    upstream,
    gate,
    async close() {
      await gate.close();
      await upstream.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The same, in front of the v1 SDK policy server. */
export function startPolicyGate(
  files: Readonly<Record<string, string>>,
  flags: readonly string[] = [],
): Promise<PolicyGate> {
  return startGateWith(startPolicyServer, files, flags);
}
