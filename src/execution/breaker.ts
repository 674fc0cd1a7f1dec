import { performance } from 'node:perf_hooks';
import { CircuitState, ConsecutiveBreaker, CountBreaker, type IBreaker } from 'cockatiel';
import { breakerChange } from '../telemetry/channels.ts';

export interface BreakerOptions {
  /** Failures in a row that open it; 0: off. */
  readonly consecutiveFailures: number;
  /** Failure percentage over the last `windowCalls` calls that opens it; 0: off. */
  readonly failurePercent: number;
  readonly windowCalls: number;
  /** How long it stays open before one probe is let through. */
  readonly openMs: number;
  /** The monotonic clock, in milliseconds; a test's own. */
  readonly now?: () => number;
}

/** An attempt the breaker let through, to be settled once it ends. */
export interface Admitted {
  readonly ok: true;
  /** The circuit's state when it was let through; the counting rules weigh its end by it. */
  readonly state: CircuitState.Closed | CircuitState.HalfOpen;
  /** The half-open period it probes for; undefined for an attempt let through closed. */
  readonly probe: HalfOpen | undefined;
}

export type Admission = Admitted | { readonly ok: false; readonly retryAfterMs: number };

/** One half-open period: its probe is in flight, and later attempts wait for what it learns. */
interface HalfOpen {
  readonly decided: Promise<void>;
  readonly decide: () => void;
}

const STATE_LABEL = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.HalfOpen]: 'half_open',
  [CircuitState.Open]: 'open',
  [CircuitState.Isolated]: 'open',
} as const;

const CLOSED: Admitted = Object.freeze({ ok: true, state: CircuitState.Closed, probe: undefined });

/**
 * The upstream's circuit breaker: opens on consecutive failures or a failure
 * ratio (cockatiel's counting rules), refuses at once while open, lets one
 * probe through after `openMs` (half-open) while later attempts wait for its
 * answer, and closes on its success.
 *
 * Admission and settling are synchronous, not a wrapper around the attempt:
 * every allowed tools/call passes here, and wrapping it in cockatiel's policy
 * cost each call five nested promises and their hops.
 */
export class UpstreamBreaker {
  readonly #rules: IBreaker;
  readonly #openMs: number;
  readonly #now: () => number;
  #state: CircuitState.Closed | CircuitState.Open | CircuitState.HalfOpen = CircuitState.Closed;
  #openedAt = 0;
  #halfOpen: HalfOpen | undefined;

  constructor(options: BreakerOptions) {
    this.#openMs = options.openMs;
    this.#now = options.now ?? (() => performance.now());
    this.#rules = eitherBreaker(options);
  }

  /**
   * Whether an attempt may go upstream now. While open, the refusal says when
   * to come back; while a probe is in flight, the answer waits for it.
   */
  admit(): Admission | Promise<Admission> {
    if (this.#state === CircuitState.Closed) return CLOSED;
    if (this.#state === CircuitState.HalfOpen) {
      return (this.#halfOpen as HalfOpen).decided.then(() => this.admit());
    }
    const left = this.#openedAt + this.#openMs - this.#now();
    if (left > 0) return { ok: false, retryAfterMs: Math.max(1, Math.ceil(left)) };
    let decide!: () => void;
    const decided = new Promise<void>((resolve) => (decide = resolve));
    const probe: HalfOpen = { decided, decide };
    this.#halfOpen = probe;
    this.#change(CircuitState.HalfOpen);
    return { ok: true, state: CircuitState.HalfOpen, probe };
  }

  /** Reports how an admitted attempt ended: `failed` when it counts against the upstream. */
  settle(admitted: Admitted, failed: boolean): void {
    const { state, probe } = admitted;
    if (probe !== undefined) {
      // A probe for a half-open period that has since ended (an older attempt reopened it) decides nothing.
      if (probe !== this.#halfOpen) return;
      if (failed) {
        this.#rules.failure(CircuitState.HalfOpen);
        this.#open();
      } else {
        this.#rules.success(CircuitState.HalfOpen);
        this.#close();
      }
      return;
    }
    if (!failed) this.#rules.success(state);
    else if (this.#rules.failure(state) && this.#state !== CircuitState.Open) this.#open();
  }

  get state(): 'closed' | 'open' | 'half_open' {
    return STATE_LABEL[this.#state];
  }

  #open(): void {
    this.#openedAt = this.#now();
    this.#endHalfOpen();
    this.#change(CircuitState.Open);
  }

  #close(): void {
    this.#endHalfOpen();
    this.#change(CircuitState.Closed);
  }

  #endHalfOpen(): void {
    const probe = this.#halfOpen;
    this.#halfOpen = undefined;
    probe?.decide();
  }

  #change(state: CircuitState.Closed | CircuitState.Open | CircuitState.HalfOpen): void {
    this.#state = state;
    if (breakerChange.hasSubscribers) breakerChange.publish({ state: STATE_LABEL[state] });
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
