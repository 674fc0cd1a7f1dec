/**
 * The things conformance talks to: `@modelcontextprotocol/server-everything`
 * in Streamable HTTP mode (2025 revisions), the stateless v2-SDK fixture
 * (v2-server.ts, 2026-07-28), and toolgate in front of either.
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../test/helpers/ports.ts';
import { answers, spawnNode, waitUntil, type Child } from './processes.ts';

export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');
const LOOPBACK = path.join(import.meta.dirname, 'loopback.ts');
const V2_SERVER = path.join(import.meta.dirname, 'v2-server.ts');
const START_DEADLINE_MS = 15_000;

export interface Running {
  readonly child: Child;
  /** The MCP endpoint, e.g. http://127.0.0.1:1234/mcp */
  readonly mcpUrl: string;
  readonly port: number;
}

/** The entry script named by a package's `bin` field in the repo's node_modules. */
export function packageBin(pkg: string, bin: string): string {
  const dir = path.join(REPO_ROOT, 'node_modules', ...pkg.split('/'));
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
    bin?: string | Record<string, string>;
  };
  const rel = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.[bin];
  if (rel === undefined) throw new Error(`${pkg} has no bin ${bin}`);
  return path.join(dir, rel);
}

export async function startEverything(): Promise<Running> {
  const port = await freePort();
  const entry = packageBin('@modelcontextprotocol/server-everything', 'mcp-server-everything');
  const child = spawnNode(
    'server-everything',
    ['--import', LOOPBACK, entry, 'streamableHttp'],
    { ...process.env, PORT: String(port) },
    REPO_ROOT,
  );
  const mcpUrl = `http://127.0.0.1:${port}/mcp`;
  // Any HTTP answer on /mcp (a GET without session is a 400) means it is listening.
  await waitUntil(child, 'listening', START_DEADLINE_MS, () => answers(mcpUrl));
  return { child, mcpUrl, port };
}

/** The v2-SDK fixture, which binds 127.0.0.1 itself. */
export async function startV2Fixture(): Promise<Running> {
  const port = await freePort();
  const child = spawnNode('v2-fixture', [V2_SERVER], { ...process.env, PORT: String(port) }, REPO_ROOT);
  const mcpUrl = `http://127.0.0.1:${port}/mcp`;
  // A GET is answered (405 or 400) once it listens.
  await waitUntil(child, 'listening', START_DEADLINE_MS, () => answers(mcpUrl));
  return { child, mcpUrl, port };
}

/** Runs `entry` (toolgate's CLI, src/cli.ts or a built dist/cli.js) in front of the upstream, with a policy when given one. */
export async function startToolgate(entry: string, upstreamPort: number, policyFile?: string): Promise<Running> {
  const port = await freePort();
  const adminPort = await freePort();
  const child = spawnNode(
    'toolgate',
    [
      entry,
      '--upstream',
      `http://127.0.0.1:${upstreamPort}`,
      '--port',
      String(port),
      '--admin-port',
      String(adminPort),
      '--host',
      '127.0.0.1',
      ...(policyFile === undefined ? [] : ['--policy-file', policyFile]),
    ],
    process.env,
    REPO_ROOT,
  );
  await waitUntil(child, 'ready', START_DEADLINE_MS, () => answers(`http://127.0.0.1:${adminPort}/readyz`, 200));
  return { child, mcpUrl: `http://127.0.0.1:${port}/mcp`, port };
}
