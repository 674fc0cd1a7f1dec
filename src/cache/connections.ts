/**
 * The two Redis connections a sidecar holds, whatever uses Redis: one for
 * commands (grant snapshots and revision reads, one-time tokens, approvals,
 * idempotency records, activations, tasks, pins, rate limits, publishing),
 * and one subscriber carrying every channel (`subscriber.ts`). With ~2,500
 * sidecars a connection per component would reach Redis' default `maxclients`
 * (10,000); two per sidecar leave room for five thousand.
 *
 * Whoever opens them closes them, after every component using them has let
 * go: components register handlers and remove them on their own close, and
 * never close or quit a connection they were handed.
 *
 * In a Cluster the command client connects to each master it sends to (the
 * domain's slot owner, and a random master for keyless commands such as
 * PUBLISH), and the subscriber is the Cluster client's own subscriber
 * connection, to one node.
 */
import { createRedisClient, type RedisClient, type RedisConfig } from './redis.ts';
import { RedisSubscriber } from './subscriber.ts';

export interface RedisConnections {
  readonly config: RedisConfig;
  /** Commands, shared by every component. */
  readonly client: RedisClient;
  /** Every channel, on one subscriber connection. */
  readonly subscriber: RedisSubscriber;
  /**
   * Both connections drop and reconnect (with Sentinel: to the master now).
   * For a component that learnt the node it talks to is no longer the
   * master, which is as true for every other user of the connections.
   */
  reconnect(): void;
  /** The subscriber first, then the command client. */
  close(): void;
}

/** Names in CLIENT LIST: `<prefix>-shared` (commands) and `<prefix>-subscriber`. */
export function openRedisConnections(config: RedisConfig, prefix = 'toolgate'): RedisConnections {
  const client = createRedisClient(config, { name: `${prefix}-shared` });
  const subscriber =
    config.mode === 'cluster'
      ? new RedisSubscriber(client, { owned: false })
      : new RedisSubscriber(createRedisClient(config, { name: `${prefix}-subscriber` }), { owned: true });
  let closed = false;
  return {
    config,
    client,
    subscriber,
    reconnect() {
      if (closed) return;
      client.disconnect(true);
      subscriber.reconnect();
    },
    close() {
      if (closed) return;
      closed = true;
      subscriber.close();
      client.disconnect();
    },
  };
}
