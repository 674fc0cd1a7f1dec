import { Counter, Gauge, type Registry } from '../prom.ts';
import {
  catalogueState,
  contractEvent,
  contractPinsLost,
  contractState,
  on,
  type CatalogueState,
  type ContractEvent,
  type ContractPinsLost,
  type ContractState,
  type Subscription,
} from '../channels.ts';

/** toolgate's copy of the upstream catalogue and the contracts pinned over it: tools, unenforceable schemas, drift, quarantine, lost pins, lint findings. */
export function contractsMetrics(registry: Registry): Subscription[] {
  const catalogueTools = new Gauge({
    name: 'toolgate_catalogue_tools',
    help: "Tools in toolgate's copy of the upstream catalogue.",
    registers: [registry],
  });

  const unenforceable = new Gauge({
    name: 'toolgate_catalogue_unenforceable_tools',
    help: 'Catalogue tools whose inputSchema toolgate cannot enforce; calls to them are refused.',
    registers: [registry],
  });

  const contractDrift = new Counter({
    name: 'toolgate_contract_drift_total',
    help: 'Tools seen with a contract digest no pin approves, by action (alert, or quarantine in enforce mode).',
    labelNames: ['action'] as const,
    registers: [registry],
  });

  const quarantinedTools = new Gauge({
    name: 'toolgate_contract_quarantined_tools',
    help: 'Tools quarantined now (contract drift, unpinned with unknownTools: quarantine, or a high lint finding with lint: enforce).',
    registers: [registry],
  });

  const pinsLost = new Counter({
    name: 'toolgate_contract_pins_lost_total',
    help: 'Contract pins this replica held that the pin store (Redis) no longer had, or had only in an older form: kept in force and written back. Any increase means the store lost data.',
    registers: [registry],
  });

  const lintFindings = new Counter({
    name: 'toolgate_contract_lint_findings_total',
    help: 'Description lint findings on newly seen tool contracts, by rule id and severity.',
    labelNames: ['rule', 'severity'] as const,
    registers: [registry],
  });
  return [
    on(catalogueState, (c: CatalogueState) => {
      catalogueTools.set(c.tools);
      unenforceable.set(c.unenforceable);
    }),
    // Rule ids and severities come from the lint's closed rule table.
    on(contractEvent, (e: ContractEvent) => {
      if (e.kind === 'drift') contractDrift.labels(e.action).inc();
      for (const f of e.findings ?? []) lintFindings.labels(f.rule, f.severity).inc();
    }),
    on(contractState, (m: ContractState) => quarantinedTools.set(m.quarantined)),
    on(contractPinsLost, (m: ContractPinsLost) => pinsLost.inc(m.count)),
  ];
}
