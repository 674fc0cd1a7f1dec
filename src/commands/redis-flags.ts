/**
 * The Redis flags the admin commands share (`grants`, `approvals`,
 * `contracts`): the connection, the policy domain, each falling back to the
 * sidecar's own environment variable and then to the sidecar's default.
 */
import { once } from 'node:events';
import { isDomain } from '../cache/keys.ts';
import { parseRedisConfig, REDIS_SETTINGS, type RedisClient, type RedisConfig } from '../cache/redis.ts';
import { DEFAULT_POLICY_DOMAIN } from '../config/settings.ts';

export const REDIS_FLAGS: ReadonlySet<string> = new Set([
  '--redis-url',
  '--domain',
  '--redis-username',
  '--redis-password-file',
  '--redis-tls-ca-file',
  '--redis-connect-timeout-ms',
  '--redis-command-timeout-ms',
]);

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface RedisTarget {
  readonly redis: RedisConfig;
  readonly domain: string;
}

/** The Redis target the flags (or environment) name; `undefined` value when no URL is given at all. */
export function redisTarget(
  flags: ReadonlyMap<string, string>,
  env: NodeJS.ProcessEnv,
): Parsed<RedisTarget | undefined> {
  const fromEnv = (flag: string, variable: string) =>
    flags.get(flag) ?? (env[variable] === '' ? undefined : env[variable]);
  const url = fromEnv('--redis-url', REDIS_SETTINGS.url);
  if (url === undefined) return { ok: true, value: undefined };
  const domain = fromEnv('--domain', 'TOOLGATE_POLICY_DOMAIN') ?? DEFAULT_POLICY_DOMAIN;
  if (!isDomain(domain))
    return { ok: false, reason: '--domain must be 1-64 letters, digits, dots, underscores or hyphens' };
  const config = parseRedisConfig({
    url,
    username: fromEnv('--redis-username', REDIS_SETTINGS.username),
    passwordFile: fromEnv('--redis-password-file', REDIS_SETTINGS.passwordFile),
    tlsCaFile: fromEnv('--redis-tls-ca-file', REDIS_SETTINGS.tlsCaFile),
    connectTimeoutMs: whole(fromEnv('--redis-connect-timeout-ms', REDIS_SETTINGS.connectTimeoutMs)),
    commandTimeoutMs: whole(fromEnv('--redis-command-timeout-ms', REDIS_SETTINGS.commandTimeoutMs)),
  });
  if (!config.ok) return { ok: false, reason: `invalid setting ${config.setting}: ${config.problem}` };
  return { ok: true, value: { redis: config.config, domain } };
}

function whole(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  return /^\d{1,7}$/.test(text) ? Number(text) : Number.NaN;
}

export async function whenReady(client: RedisClient, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return true;
  try {
    await once(client, 'ready', { signal: AbortSignal.timeout(timeoutMs) });
    return true;
  } catch {
    return false;
  }
}

/**
 * `--name value`, `--name=value` and bare switches, each checked against what
 * the action allows; unknown arguments are refused (echoing at most 64 characters).
 */
export function parseFlags(
  args: readonly string[],
  valueFlags: ReadonlySet<string>,
  switches: ReadonlySet<string>,
  allowed: (name: string) => boolean,
  usage: string,
): Parsed<{ flags: Map<string, string>; positional: string[] }> {
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (switches.has(name) && eq < 0) {
      flags.set(name, '');
    } else if (valueFlags.has(name)) {
      const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
      if (value === undefined) return { ok: false, reason: `${name} needs a value` };
      flags.set(name, value);
    } else {
      return { ok: false, reason: `unknown argument ${JSON.stringify(name.slice(0, 64))}; ${usage}` };
    }
    if (!allowed(name)) return { ok: false, reason: `${name} does not apply here` };
  }
  return { ok: true, value: { flags, positional } };
}
