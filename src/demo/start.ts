import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { loadSettings, type Settings } from '../config/settings.ts';
import { start } from '../main.ts';
import { createDemoServer, METADATA_PATH } from './server.ts';
import type { Endpoints } from './steps.ts';

const DEMO_DIR = join(import.meta.dirname, '../../examples/demo');
const DEMO_POLICY = join(DEMO_DIR, 'policy.yaml');

export interface Demo extends Endpoints {
  readonly settings: Settings;
  /** The policy file the demo enforces, as the reader finds it in the repository. */
  readonly policy: string;
  close(): Promise<void>;
}

/**
 * The demo MCP server on a free loopback port with toolgate in front of it on
 * embedded defaults (no Redis), enforcing the demo policy with deferred
 * listing on. Flags and TOOLGATE_* variables work as for `toolgate` itself,
 * except the upstream; the demo's policy and deferred listing apply unless set.
 * Throws SettingError for a bad setting, StartupError for a port in use.
 */
export async function startDemo(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<Demo> {
  let resource: string | undefined;
  const upstream = createDemoServer(() => resource);
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  let scratch: string | undefined;
  const cleanUp = async (): Promise<void> => {
    upstream.closeAllConnections();
    upstream.close();
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  };
  try {
    const origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const flags = ['--host', '127.0.0.1', ...argv, '--upstream', origin];
    const demoEnv = {
      ...env,
      TOOLGATE_POLICY_FILE: env.TOOLGATE_POLICY_FILE || DEMO_POLICY,
      TOOLGATE_DEFERRED_TOOLS: env.TOOLGATE_DEFERRED_TOOLS || 'true',
    };
    let settings = loadSettings(flags, demoEnv);
    const policy = settings.policyFile ?? DEMO_POLICY;
    if (policy === DEMO_POLICY) {
      // The challenge's metadata URL must carry toolgate's port, which the policy names before toolgate listens.
      const port = settings.port === 0 ? await freePort(settings.host) : settings.port;
      scratch = await mkdtemp(join(tmpdir(), 'toolgate-demo-'));
      const file = join(scratch, 'policy.yaml');
      await writeFile(file, await demoPolicy(`http://127.0.0.1:${port}${METADATA_PATH}`));
      settings = loadSettings([...flags, '--port', String(port), '--policy-file', file], demoEnv);
    }
    const gate = await start(settings);
    const mcp = `http://127.0.0.1:${gate.port}${settings.mcpPath}`;
    resource = mcp;
    await gate.ready;
    return {
      settings,
      policy,
      mcp,
      admin: `http://127.0.0.1:${gate.adminPort}`,
      close: async () => {
        await gate.close();
        await cleanUp();
      },
    };
  } catch (err) {
    await cleanUp();
    throw err;
  }
}

/** examples/demo/policy.yaml, comments kept, with the metadata URL given and the key file found where it lies. */
async function demoPolicy(metadataUrl: string): Promise<string> {
  const doc = parseDocument(await readFile(DEMO_POLICY, 'utf8'));
  doc.setIn(['authentication', 'resourceMetadataUrl'], metadataUrl);
  doc.setIn(
    ['authentication', 'staticKeys', 'file'],
    join(DEMO_DIR, String(doc.getIn(['authentication', 'staticKeys', 'file']))),
  );
  return doc.toString();
}

/** A port free a moment ago: toolgate binds it next, or says it is in use. */
async function freePort(host: string): Promise<number> {
  const probe = createServer().listen(0, host);
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
