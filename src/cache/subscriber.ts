/**
 * One subscriber connection for every channel a sidecar listens on. The grant
 * store's revision notices and the list-changed relay register a handler per
 * channel here instead of opening a connection each, so a sidecar holds two
 * Redis connections: this one and the command connection everything shares
 * (`cache/connections.ts`).
 *
 * After every reconnect the hub subscribes every channel again itself, with
 * the failure handled (ioredis' own resubscription is off; `redis.ts` says
 * why), then tells each handler that messages published meanwhile were lost
 * (`resumed`), so each component decides what a gap means to it.
 *
 * In a Cluster the hub rides on the command client: ioredis sends SUBSCRIBE
 * over the Cluster's own subscriber connection, to one node, opened on the
 * first SUBSCRIBE and moved to another node, channels and all, when its node
 * goes away. Non-sharded pub/sub reaches every node, so one is enough; a
 * second Cluster client would hold a connection of its own to a master too.
 */
import type { RedisClient } from './redis.ts';

export interface ChannelHandler {
  /** One message on the channel. A handler that throws does not keep it from the others. */
  readonly message: (text: string) => void;
  /** Subscribed again after the connection came back: messages published while it was away were lost. */
  readonly resumed?: () => void;
}

export class RedisSubscriber {
  readonly #connection: RedisClient;
  /** Whether closing the hub closes the connection (a dedicated one), or the connection belongs to someone else (a Cluster's). */
  readonly #owned: boolean;
  readonly #channels = new Map<string, Set<ChannelHandler>>();
  #readyBefore: boolean;
  #closed = false;

  readonly #onMessage = (channel: string, text: string): void => {
    tellEach(this.#channels.get(channel), (handler) => handler.message(text));
  };

  readonly #onReady = (): void => {
    const resumed = this.#readyBefore;
    this.#readyBefore = true;
    const channels = [...this.#channels.keys()];
    if (channels.length === 0) return;
    const done = () => {
      if (!resumed || this.#closed) return;
      for (const channel of channels) tellEach(this.#channels.get(channel), (handler) => handler.resumed?.());
    };
    // After the subscription is in place (or failed), so whatever a handler
    // reads to make up for the gap is read after anything it would be told.
    this.#connection.subscribe(...channels).then(done, done);
  };

  /**
   * `connection`: a connection of its own (standalone, Sentinel), which the
   * hub closes, or a Cluster client, whose subscriber connection it uses and
   * whose owner closes it.
   */
  constructor(connection: RedisClient, options: { readonly owned: boolean }) {
    this.#connection = connection;
    this.#owned = options.owned;
    this.#readyBefore = connection.status === 'ready';
    connection.on('message', this.#onMessage);
    connection.on('ready', this.#onReady);
  }

  /** Calls `handler` for every message on `channel` until the returned function is called. */
  listen(channel: string, handler: ChannelHandler): () => void {
    let handlers = this.#channels.get(channel);
    if (handlers === undefined) {
      this.#channels.set(channel, (handlers = new Set()));
      // Not ready: the next 'ready' subscribes every channel.
      if (!this.#closed && this.#connection.status === 'ready') this.#connection.subscribe(channel).catch(() => {});
    }
    handlers.add(handler);
    return () => {
      const set = this.#channels.get(channel);
      if (set === undefined || !set.delete(handler) || set.size > 0) return;
      this.#channels.delete(channel);
      if (!this.#closed && this.#connection.status === 'ready') this.#connection.unsubscribe(channel).catch(() => {});
    };
  }

  /**
   * Drops the connection and makes a new one (through Sentinel, to the master
   * now), subscribing everything again. A Cluster's subscriber moves with its
   * client's reconnect.
   */
  reconnect(): void {
    if (this.#owned && !this.#closed) this.#connection.disconnect(true);
  }

  /** Stops dispatching; closes the connection when it is the hub's own. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#connection.off('message', this.#onMessage);
    this.#connection.off('ready', this.#onReady);
    const channels = [...this.#channels.keys()];
    this.#channels.clear();
    if (this.#owned) this.#connection.disconnect();
    // A Cluster client lives on with its owner until it closes it.
    else if (channels.length > 0 && this.#connection.status === 'ready')
      this.#connection.unsubscribe(...channels).catch(() => {});
  }
}

/** Calls `tell` on each handler; one that throws does not keep the others from hearing. */
function tellEach(handlers: ReadonlySet<ChannelHandler> | undefined, tell: (handler: ChannelHandler) => void): void {
  // A copy: a handler may stop listening while it is told.
  for (const handler of Array.from(handlers ?? [])) {
    try {
      tell(handler);
    } catch {
      // Its failure is its own.
    }
  }
}
