/**
 * A breaker per Redis client. A Redis that is stalled (SIGSTOP, a long
 * `CLIENT PAUSE`, a half-open connection) keeps its TCP connection, so
 * ioredis sends every command and each caller pays the whole command timeout
 * before its 503. Once a command has timed out, the client is known to be
 * down: for the next second calls are refused at once, without sending, and
 * then one call probes while the others keep being refused. The first answer
 * closes it again. A refused call sent nothing, so it needs no take-back.
 *
 * Kept per client object rather than per store: grants, approvals,
 * idempotency, pins and one-time tokens share one connection, and a stall
 * one of them saw is a stall for all. Not loaded with ioredis: it knows the client only as a key.
 */
import { RedisDeadlineError, withDeadline } from './deadline.ts';

/** While a client is known to be down, it is asked again once per this long. */
const PROBE_MS = 1000;

/** Raised instead of sending a command while the client's breaker is open. */
export class RedisBreakerOpenError extends Error {
  override readonly name = 'RedisBreakerOpenError';
}

interface BreakerOptions {
  readonly probeMs?: number;
  readonly now?: () => number;
}

export class RedisBreaker {
  readonly #probeMs: number;
  readonly #now: () => number;
  /** 0 while closed; else nothing is sent before this moment, and the first call after it probes. */
  #askAfter = 0;

  constructor(options: BreakerOptions = {}) {
    this.#probeMs = options.probeMs ?? PROBE_MS;
    this.#now = options.now ?? (() => performance.now());
  }

  get open(): boolean {
    return this.#askAfter !== 0;
  }

  /**
   * Opens it: the client is known to be down for the next probe period. For
   * a deadline above the breaker (one bound over several sends) that passed:
   * it may pass before the sends' own deadlines do.
   */
  timedOut(): void {
    this.#askAfter = this.#now() + this.#probeMs;
  }

  /** Runs `work` within `ms`, or refuses it at once while the client is known to be down. */
  async run<T>(ms: number, work: () => Promise<T>): Promise<T> {
    if (this.#askAfter !== 0) {
      const now = this.#now();
      if (now < this.#askAfter) throw new RedisBreakerOpenError('redis known to be down');
      // This call is the probe; the others wait for what it learns.
      this.#askAfter = now + this.#probeMs;
    }
    try {
      const value = await withDeadline(work(), ms);
      this.#askAfter = 0;
      return value;
    } catch (err) {
      if (isTimeout(err)) this.timedOut();
      throw err;
    }
  }
}

/** A stall, as opposed to an answer (even an error reply) or a closed connection, which fail fast already. */
export function isTimeout(err: unknown): boolean {
  return err instanceof RedisDeadlineError || (err instanceof Error && err.message === 'Command timed out');
}

const breakers = new WeakMap<object, RedisBreaker>();

/** The breaker every caller of this client shares. */
export function breakerOf(client: object): RedisBreaker {
  let b = breakers.get(client);
  if (b === undefined) breakers.set(client, (b = new RedisBreaker()));
  return b;
}

/** One bounded call on `client`, through its breaker. */
export function redisCall<T>(client: object, ms: number, work: () => Promise<T>): Promise<T> {
  return breakerOf(client).run(ms, work);
}
