import { Registry } from '../prom.ts';
import { auditMetrics } from './audit.ts';
import { contractsMetrics } from './contracts.ts';
import { decisionsMetrics } from './decisions.ts';
import { executionMetrics } from './execution.ts';
import { grantsMetrics } from './grants.ts';
import { heapTrimMetrics } from './heap-trim.ts';
import { trafficMetrics } from './traffic.ts';
import { collectProcessMetrics } from '../process-metrics.ts';

/**
 * Every metric toolgate exports, one group per file in `metrics/`, each with
 * the channels that feed it; labels come from closed sets so cardinality
 * stays bounded. The README metrics table is generated from this registry.
 */
export interface Metrics {
  readonly registry: Registry;
  /** Unsubscribes from the telemetry channels. */
  dispose(): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectProcessMetrics(registry);
  const subscriptions = [
    ...trafficMetrics(registry),
    ...contractsMetrics(registry),
    ...decisionsMetrics(registry),
    ...grantsMetrics(registry),
    ...auditMetrics(registry),
    ...executionMetrics(registry),
    ...heapTrimMetrics(registry),
  ];
  for (const s of subscriptions) s.subscribe();
  return {
    registry,
    dispose() {
      for (const s of subscriptions) s.unsubscribe();
    },
  };
}
