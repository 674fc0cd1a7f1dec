import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { loadSettings, type Settings } from '../config/settings.ts';
import { start } from '../main.ts';
import { createDemoServer } from './server.ts';
import type { Endpoints } from './steps.ts';

const DEMO_POLICY = join(import.meta.dirname, '../../examples/demo/policy.yaml');

export interface Demo extends Endpoints {
  readonly settings: Settings;
  close(): Promise<void>;
}

/**
 * The demo MCP server on a free loopback port with toolgate in front of it on
 * embedded defaults (no Redis), enforcing the demo policy with deferred
 * listing on. Flags and TOOLGATE_* variables work as for `toolgate` itself,
 * except the upstream; the demo's policy and deferred listing apply unless set.
 * Throws SettingError for a bad setting.
 */
export async function startDemo(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<Demo> {
  const upstream = createDemoServer();
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  const closeUpstream = (): void => {
    upstream.closeAllConnections();
    upstream.close();
  };
  try {
    const origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const settings = loadSettings(['--host', '127.0.0.1', ...argv, '--upstream', origin], {
      ...env,
      TOOLGATE_POLICY_FILE: env.TOOLGATE_POLICY_FILE || DEMO_POLICY,
      TOOLGATE_DEFERRED_TOOLS: env.TOOLGATE_DEFERRED_TOOLS || 'true',
    });
    const gate = await start(settings);
    await gate.ready;
    return {
      settings,
      mcp: `http://127.0.0.1:${gate.port}${settings.mcpPath}`,
      admin: `http://127.0.0.1:${gate.adminPort}`,
      close: async () => {
        await gate.close();
        closeUpstream();
      },
    };
  } catch (err) {
    closeUpstream();
    throw err;
  }
}
