import { log } from './log.ts';

/**
 * Wraps a channel subscriber: diagnostics_channel rethrows a subscriber's
 * exception as an uncaught one, so a telemetry bug would end the process.
 * The failure is logged by kind only, once per subscriber, and swallowed.
 */
export function guard<A extends unknown[]>(subscriber: string, fn: (...args: A) => void): (...args: A) => void {
  let reported = false;
  return (...args) => {
    try {
      fn(...args);
    } catch (err) {
      if (reported) return;
      reported = true;
      log.error('telemetry subscriber failed; further failures are not logged', {
        subscriber,
        error: err instanceof Error ? err.name : typeof err,
      });
    }
  };
}
