/**
 * The subscriber hub (src/cache/subscriber.ts) and the pair of connections
 * built on it (src/cache/connections.ts), against a real redis-server: every
 * channel on one connection, each message to its own handlers, subscriptions
 * restored after the connection was killed, a gap reported, and a closed
 * component never closing what others still use.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openRedisConnections, type RedisConnections } from '../../src/cache/connections.ts';
import { parseRedisConfig } from '../../src/cache/redis.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { cli } from '../helpers/redis-topologies.ts';
import { waitFor } from '../helpers/wait.ts';

async function names(redis: RedisServer): Promise<string[]> {
  return (await cli(redis.port, 'CLIENT', 'LIST'))
    .split('\n')
    .map((l) => /(?:^| )name=(\S*)/.exec(l)?.[1] ?? '')
    .filter((n) => n.startsWith('hub-'))
    .sort();
}

async function subscribers(redis: RedisServer, channel: string): Promise<number> {
  return Number((await cli(redis.port, 'PUBSUB', 'NUMSUB', channel)).split('\n')[1]);
}

describe('one subscriber connection for every channel', () => {
  let redis: RedisServer;
  let connections: RedisConnections;

  before(async () => {
    redis = await startRedis();
    const parsed = parseRedisConfig({ url: redis.url, commandTimeoutMs: 300, connectTimeoutMs: 1000 });
    assert.ok(parsed.ok);
    connections = openRedisConnections(parsed.config, 'hub');
    await new Promise((ready) => connections.client.once('ready', ready));
  });
  after(async () => {
    connections?.close();
    await redis?.close();
  });

  it('carries several channels on one connection, each message to its own handlers', async () => {
    const seen: string[] = [];
    const stopA = connections.subscriber.listen('one', { message: (t) => seen.push(`a:${t}`) });
    const stopB = connections.subscriber.listen('one', {
      message: (t) => {
        seen.push(`b:${t}`);
        throw new Error('a failing handler');
      },
    });
    const stopC = connections.subscriber.listen('two', { message: (t) => seen.push(`c:${t}`) });
    try {
      await waitFor(
        async () => (await subscribers(redis, 'one')) === 1 && (await subscribers(redis, 'two')) === 1,
        'both channels subscribed',
      );
      assert.deepEqual(await names(redis), ['hub-shared', 'hub-subscriber']);
      await connections.client.publish('one', '1');
      await connections.client.publish('two', '2');
      await waitFor(() => seen.length === 3, 'three deliveries');
      assert.deepEqual(seen.sort(), ['a:1', 'b:1', 'c:2']);

      // The last handler of a channel gone, the channel is unsubscribed; the other stays.
      stopC();
      await waitFor(async () => (await subscribers(redis, 'two')) === 0, 'two unsubscribed');
      stopA();
      assert.equal(await subscribers(redis, 'one'), 1, 'one still has a handler');
    } finally {
      stopA();
      stopB();
      stopC();
    }
  });

  it('subscribes every channel again after CLIENT KILL, then reports the gap', async () => {
    const seen: string[] = [];
    let resumed = 0;
    const stops = ['x', 'y'].map((ch) =>
      connections.subscriber.listen(ch, { message: (t) => seen.push(`${ch}:${t}`), resumed: () => void resumed++ }),
    );
    try {
      await waitFor(
        async () => (await subscribers(redis, 'x')) === 1 && (await subscribers(redis, 'y')) === 1,
        'subscribed',
      );
      assert.match(await cli(redis.port, 'CLIENT', 'KILL', 'TYPE', 'pubsub'), /^[1-9]/);
      await waitFor(
        async () => (await subscribers(redis, 'x')) === 1 && (await subscribers(redis, 'y')) === 1,
        'subscribed again',
      );
      // Reported once the subscription is back: whatever a handler reads then comes after anything it would be told.
      await waitFor(() => resumed === 2, 'each handler told of the gap');
      await connections.client.publish('x', 'after');
      await connections.client.publish('y', 'after');
      await waitFor(() => seen.length === 2, 'messages after the reconnect');
      assert.deepEqual(seen.sort(), ['x:after', 'y:after']);
      assert.deepEqual(await names(redis), ['hub-shared', 'hub-subscriber'], 'still two connections');
    } finally {
      for (const stop of stops) stop();
    }
  });

  it('closing the pair closes both its connections and nothing else', async () => {
    const parsed = parseRedisConfig({ url: redis.url, commandTimeoutMs: 300, connectTimeoutMs: 1000 });
    assert.ok(parsed.ok);
    const other = openRedisConnections(parsed.config, 'hub-other');
    const stop = other.subscriber.listen('z', { message: () => {} });
    await waitFor(async () => (await subscribers(redis, 'z')) === 1, 'subscribed');
    stop();
    other.close();
    other.close();
    await waitFor(async () => !(await names(redis)).some((n) => n.startsWith('hub-other')), 'both connections gone');
    assert.deepEqual(await names(redis), ['hub-shared', 'hub-subscriber'], 'the first pair is untouched');
  });
});
