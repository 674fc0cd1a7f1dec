import { loadSettings } from '../../src/config/settings.ts';
import { start, type Toolgate } from '../../src/main.ts';

export interface RunningToolgate extends Toolgate {
  readonly url: string;
  readonly adminUrl: string;
}

/** Starts toolgate in process on free loopback ports in front of `upstream`. */
export async function startToolgate(upstream: string, flags: readonly string[] = []): Promise<RunningToolgate> {
  const settings = loadSettings(
    [
      '--upstream',
      upstream,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--admin-port',
      '0',
      '--log-level',
      'error',
      '--drain-timeout-ms',
      '2000',
      ...flags,
    ],
    {},
  );
  const gate = await start(settings);
  return { ...gate, url: `http://127.0.0.1:${gate.port}/mcp`, adminUrl: `http://127.0.0.1:${gate.adminPort}` };
}
