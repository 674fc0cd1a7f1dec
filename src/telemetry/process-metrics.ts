import { collectDefaultMetrics, type Registry } from './prom.ts';

/**
 * How often the event-loop delay is sampled. prom-client's default, 10 ms,
 * is a timer that wakes an idle sidecar 100 times a second for ever (and,
 * at moderate load, adds a wake-up for every few requests); a delay worth
 * alerting on lasts far longer than 100 ms, so ten samples a second still
 * see it, in the maximum if not in every percentile.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/** Node's process metrics (CPU, memory, handles, event-loop delay, GC) under `toolgate_process_`. */
export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({
    register: registry,
    prefix: 'toolgate_process_',
    eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
  });
}
