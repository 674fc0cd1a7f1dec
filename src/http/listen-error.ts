import { nameOfSetting, type Settings } from '../config/settings.ts';
import { StartupError } from '../errors.ts';

/** Where a listener binds, and the settings that say so, as messages name them. */
export interface Bind {
  readonly host: string;
  readonly port: number;
  readonly hostSetting: string;
  readonly portSetting: string;
}

const LINES: ReadonlyMap<string, (b: Bind) => string> = new Map([
  ['EADDRINUSE', (b: Bind) => `port ${b.port} is in use (${b.portSetting})`],
  ['EACCES', (b: Bind) => `port ${b.port} needs privileges this process does not have (${b.portSetting})`],
  ['EADDRNOTAVAIL', (b: Bind) => `${b.host} is not an address of this machine (${b.hostSetting})`],
  ['ENOTFOUND', (b: Bind) => `${b.host} does not resolve to an address (${b.hostSetting})`],
  ['EAI_AGAIN', (b: Bind) => `${b.host} does not resolve to an address (${b.hostSetting})`],
]);

/**
 * A listener that cannot bind is a setting to change, not a crash: one line
 * naming the setting replaces the stack trace, whichever listener it was.
 */
export function listenError(code: string | undefined, bind: Bind): StartupError {
  const line = code === undefined ? undefined : LINES.get(code);
  return new StartupError(
    line?.(bind) ??
      `cannot listen on ${bind.host} port ${bind.port}${code === undefined ? '' : ` (${code})`} (${bind.portSetting})`,
  );
}

/** Where one of the sidecar's listeners binds. */
export function bindOf<K extends 'port' | 'adminPort' | 'grpcPort' | 'approvalPort'>(
  settings: Pick<Settings, 'host' | K>,
  key: K,
): Bind {
  return {
    host: settings.host,
    port: settings[key] as number,
    hostSetting: nameOfSetting('host'),
    portSetting: nameOfSetting(key),
  };
}
