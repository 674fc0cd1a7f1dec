import type { ErrorId } from '../errors.ts';
import type { ForwardOutcome } from '../upstream/forward.ts';

/**
 * How one request ended, as the request-end channel labels it: forwarded,
 * answered by toolgate, or refused with a registry error.
 */
export type Outcome = ForwardOutcome | 'answered' | 'aborted' | ErrorId;

/** A finished request: its outcome and the method label telemetry files it under. */
export interface Ended {
  readonly label: string;
  readonly outcome: Outcome;
}
