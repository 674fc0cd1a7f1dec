/**
 * toolgate's own Redis client (src/cache/redis.ts) for integration tests,
 * resolved once it is ready, so a test's first command meets a connection
 * rather than the offline queue toolgate turns off.
 */
import assert from 'node:assert/strict';
import { createRedisClient, parseRedisConfig, type RedisClient } from '../../src/cache/redis.ts';

export interface TestClientOptions {
  readonly commandTimeoutMs: number;
  readonly connectTimeoutMs?: number;
  /** Shown in CLIENT LIST. */
  readonly name?: string;
}

export async function readyClient(url: string, options: TestClientOptions): Promise<RedisClient> {
  const parsed = parseRedisConfig({
    url,
    commandTimeoutMs: options.commandTimeoutMs,
    connectTimeoutMs: options.connectTimeoutMs ?? 1000,
  });
  assert.ok(parsed.ok);
  const client = createRedisClient(parsed.config, options.name === undefined ? {} : { name: options.name });
  await new Promise((ready) => client.once('ready', ready));
  return client;
}
