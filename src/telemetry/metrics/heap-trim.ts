import { Counter, type Registry } from '../prom.ts';
import { heapTrim, on, type HeapTrim, type Subscription } from '../channels.ts';

/** The heap trims (telemetry/heap-trim.ts), idle and after a large load: how often they ran and what they gave back. */
export function heapTrimMetrics(registry: Registry): Subscription[] {
  const trims = new Counter({
    name: 'toolgate_heap_trims_total',
    help: 'Heap trims: memory-reducing collections run once the process fell idle after activity (TOOLGATE_HEAP_TRIM_IDLE_MS), or right after a policy load that grew the heap by more than 64 MB.',
    registers: [registry],
  });
  const trimmed = new Counter({
    name: 'toolgate_heap_trim_released_bytes_total',
    help: 'Heap memory the heap trims gave back to the system.',
    registers: [registry],
  });
  return [
    on(heapTrim, (m: HeapTrim) => {
      trims.inc();
      trimmed.inc(m.releasedBytes);
    }),
  ];
}
