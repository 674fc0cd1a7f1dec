import { randomBytes } from 'node:crypto';
import { principalDigest } from '../cache/keys.ts';
import type { RedisConnections } from '../cache/connections.ts';
import type { RedisClient } from '../cache/redis.ts';
import { log } from '../telemetry/log.ts';
import type { ListChangedStreams } from './list-changed.ts';

/**
 * Carries "this principal's tools/list grew" between the replicas of a
 * policy domain, so a client whose stream is held by one replica hears of a
 * discovery made through another (2026-07-28 clients are stateless and may
 * reach any replica). Principals travel as digests, as in the activation
 * keys; each replica skips its own messages, having told its streams
 * already. Best effort: a message lost while Redis is away only means the
 * client sees the tools on its next tools/list.
 *
 * It publishes on the sidecar's command connection and listens on its one
 * subscriber connection, beside the grant store's revision channel; both
 * belong to the sidecar, which closes them after the relay let go.
 */
export class ListChangedRelay {
  readonly #publisher: RedisClient;
  readonly #channel: string;
  readonly #origin = randomBytes(8).toString('hex');
  readonly #stop: () => void;
  #warned = false;

  constructor(opts: { connections: RedisConnections; domain: string; streams: ListChangedStreams }) {
    this.#publisher = opts.connections.client;
    this.#channel = `tg:${opts.domain}:listchanged`;
    this.#stop = opts.connections.subscriber.listen(this.#channel, {
      message: (text) => {
        const [origin, digest] = text.split(':');
        if (origin === this.#origin || digest === undefined) return;
        opts.streams.notifyDigest(digest);
      },
    });
  }

  publish(principal: string): void {
    this.#publisher.publish(this.#channel, `${this.#origin}:${principalDigest(principal)}`).then(
      () => {
        this.#warned = false;
      },
      () => {
        if (!this.#warned) log.warn('tools/list change not relayed to other replicas: storage unavailable');
        this.#warned = true;
      },
    );
  }

  /** Stops listening; the connections stay open for their owner to close. */
  close(): void {
    this.#stop();
  }
}
