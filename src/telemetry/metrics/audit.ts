import { Counter, type Registry } from '../prom.ts';
import { auditRecord, on, type AuditRecord, type Subscription } from '../channels.ts';

/** The audit queue: events queued for writing, or dropped because it was full. */
export function auditMetrics(registry: Registry): Subscription[] {
  const auditEvents = new Counter({
    name: 'toolgate_audit_events_total',
    help: 'Audit events, by outcome: queued for writing, or dropped because the audit queue was full.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });

  const onAudit = (m: AuditRecord) => {
    const o = m.outcome;
    if (o === 'queued' || o === 'dropped') auditEvents.labels(o).inc();
  };
  return [on(auditRecord, onAudit)];
}
