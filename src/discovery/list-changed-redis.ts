import { randomBytes } from 'node:crypto';
import { principalDigest } from '../cache/keys.ts';
import { createRedisClient, type RedisClient, type RedisConfig } from '../cache/redis.ts';
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
 */
export class ListChangedRelay {
  readonly #publisher: RedisClient;
  readonly #subscriber: RedisClient;
  readonly #channel: string;
  readonly #origin = randomBytes(8).toString('hex');
  #warned = false;

  constructor(opts: { config: RedisConfig; publisher: RedisClient; domain: string; streams: ListChangedStreams }) {
    this.#publisher = opts.publisher;
    this.#channel = `tg:${opts.domain}:listchanged`;
    this.#subscriber = createRedisClient(opts.config, { name: 'toolgate-listchanged' });
    this.#subscriber.on('ready', () => {
      this.#subscriber.subscribe(this.#channel).catch(() => {});
    });
    this.#subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.#channel) return;
      const [origin, digest] = message.split(':');
      if (origin === this.#origin || digest === undefined) return;
      opts.streams.notifyDigest(digest);
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

  close(): void {
    this.#subscriber.disconnect();
  }
}
