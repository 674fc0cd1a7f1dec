import { performance } from 'node:perf_hooks';
import {
  BrokenCircuitError,
  CircuitState,
  ConsecutiveBreaker,
  CountBreaker,
  circuitBreaker,
  handleType,
  type CircuitBreakerPolicy,
  type IBreaker,
} from 'cockatiel';
import { breakerChange } from '../telemetry/channels.ts';

export interface BreakerOptions {
  /** Failures in a row that open it; 0: off. */
  readonly consecutiveFailures: number;
  /** Failure percentage over the last `windowCalls` calls that opens it; 0: off. */
  readonly failurePercent: number;
  readonly windowCalls: number;
  /** How long it stays open before one probe is let through. */
  readonly openMs: number;
}

/** Thrown inside the breaker for an attempt that counts as the upstream failing; carries the attempt's outcome out. */
class UpstreamFailed<T> extends Error {
  readonly outcome: T;
  constructor(outcome: T) {
    super('upstream failed');
    this.outcome = outcome;
  }
}

export type Guarded<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly retryAfterMs: number };

const STATE_LABEL = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.HalfOpen]: 'half_open',
  [CircuitState.Open]: 'open',
  [CircuitState.Isolated]: 'open',
} as const;

/**
 * The upstream's circuit breaker, on cockatiel: opens on consecutive
 * failures or a failure ratio, refuses at once while open, lets one probe
 * through after `openMs` (half-open), and closes on its success.
 */
export class UpstreamBreaker {
  readonly #policy: CircuitBreakerPolicy;
  readonly #openMs: number;
  #openedAt = 0;

  constructor(options: BreakerOptions) {
    this.#openMs = options.openMs;
    this.#policy = circuitBreaker(handleType(UpstreamFailed), {
      halfOpenAfter: options.openMs,
      breaker: eitherBreaker(options),
    });
    this.#policy.onStateChange((state) => {
      if (state === CircuitState.Open) this.#openedAt = performance.now();
      if (breakerChange.hasSubscribers) breakerChange.publish({ state: STATE_LABEL[state] });
    });
  }

  /**
   * Runs one attempt under the breaker. `failed` says whether its outcome
   * counts against the upstream; the outcome is returned either way. While
   * open, nothing runs and the answer says when to come back.
   */
  async run<T>(fn: () => Promise<T>, failed: (outcome: T) => boolean): Promise<Guarded<T>> {
    try {
      const value = await this.#policy.execute(async () => {
        const outcome = await fn();
        if (failed(outcome)) throw new UpstreamFailed(outcome);
        return outcome;
      });
      return { ok: true, value };
    } catch (err) {
      if (err instanceof UpstreamFailed) return { ok: true, value: err.outcome as T };
      if (err instanceof BrokenCircuitError)
        return { ok: false, retryAfterMs: Math.max(1, Math.ceil(this.#openedAt + this.#openMs - performance.now())) };
      throw err;
    }
  }

  get state(): 'closed' | 'open' | 'half_open' {
    return STATE_LABEL[this.#policy.state];
  }
}

/** Opens when either configured rule says so; each rule still sees every call. */
function eitherBreaker(o: BreakerOptions): IBreaker {
  const rules: IBreaker[] = [];
  if (o.consecutiveFailures > 0) rules.push(new ConsecutiveBreaker(o.consecutiveFailures));
  if (o.failurePercent > 0)
    rules.push(
      new CountBreaker({
        threshold: o.failurePercent / 100,
        size: o.windowCalls,
        minimumNumberOfCalls: Math.max(2, Math.ceil(o.windowCalls / 2)),
      }),
    );
  return {
    get state() {
      return rules.map((r) => r.state);
    },
    set state(value: unknown) {
      if (Array.isArray(value)) rules.forEach((r, i) => (r.state = value[i]));
    },
    success: (state) => {
      for (const r of rules) r.success(state);
    },
    failure: (state) => {
      let open = false;
      for (const r of rules) open = r.failure(state) || open;
      return open;
    },
  };
}
