/**
 * The injector's own Prometheus metrics, served on its plain-HTTP metrics
 * port. Every outcome's series exists from the start at 0, so the first
 * denial is an increase an alert can see.
 */
import { Counter, Registry } from '../telemetry/prom.ts';
import { collectProcessMetrics } from '../telemetry/process-metrics.ts';
import { OUTCOMES } from './review.ts';
import type { Outcome } from './review.ts';

export interface InjectorMetrics {
  readonly registry: Registry;
  reviewed(outcome: Outcome): void;
}

export function createInjectorMetrics(): InjectorMetrics {
  const registry = new Registry();
  collectProcessMetrics(registry);
  const reviews = new Counter({
    name: 'toolgate_injector_reviews_total',
    help: 'Pod AdmissionReviews answered, by outcome: patched (sidecar added), denied (an opted-in pod refused, the message says why), skipped (admitted unchanged: not opted in, already injected, or not a pod creation).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of OUTCOMES) reviews.inc({ outcome }, 0);
  return { registry, reviewed: (outcome) => reviews.inc({ outcome }) };
}
