import { Counter, type Registry } from 'prom-client';
import { heapTrim, on, type HeapTrim, type Subscription } from '../channels.ts';

/** The idle heap trim (telemetry/heap-trim.ts): how often it ran and what it gave back. */
export function heapTrimMetrics(registry: Registry): Subscription[] {
  const trims = new Counter({
    name: 'toolgate_heap_trims_total',
    help: 'Idle heap trims: memory-reducing collections run once the process fell idle after activity (TOOLGATE_HEAP_TRIM_IDLE_MS).',
    registers: [registry],
  });
  const trimmed = new Counter({
    name: 'toolgate_heap_trim_released_bytes_total',
    help: 'Heap memory the idle heap trims gave back to the system.',
    registers: [registry],
  });
  return [on(heapTrim, (m: HeapTrim) => {
    trims.inc();
    trimmed.inc(m.releasedBytes);
  })];
}
