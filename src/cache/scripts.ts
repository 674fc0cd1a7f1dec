/**
 * Lua scripts sent by digest (EVALSHA), with the full text only when the
 * server does not know the digest yet (after a restart or failover).
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from './redis.ts';

export interface Script {
  readonly lua: string;
  readonly sha: string;
}

export function script(lua: string): Script {
  return Object.freeze({ lua, sha: createHash('sha1').update(lua).digest('hex') });
}

export async function runScript(
  client: RedisClient,
  s: Script,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await client.evalsha(s.sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return client.eval(s.lua, keys.length, ...keys, ...args);
  }
}
