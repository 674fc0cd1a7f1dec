import { Counter, Histogram, type Registry } from '../prom.ts';
import { decision, discovery, on, type Decision, type DiscoveryDone, type Subscription } from '../channels.ts';
import { FastCounter, FastHistogram } from '../fast-metrics.ts';
import { keywordLabels } from '../keywords.ts';

/** Policy decisions by stage, outcome, mode and deciding row, their durations, the schema keywords refused arguments failed, and discovery searches. */
export function decisionsMetrics(registry: Registry): Subscription[] {
  const decisions = new FastCounter({
    name: 'toolgate_decisions_total',
    help: 'Policy decisions, by stage (authentication, grants, security_level, rate_limit, arguments, conditions, tools_list, …), outcome (allow or the refusal code), mode (enforce, or audit for a refusal only recorded in shadow mode) and rule (the grant row that decided: its name or JSON pointer; empty for other stages).',
    labelNames: ['stage', 'outcome', 'mode', 'rule'] as const,
    registers: [registry],
  });

  const decisionDuration = new FastHistogram({
    name: 'toolgate_decision_duration_seconds',
    help: 'Time one policy stage took to decide, by stage.',
    labelNames: ['stage'] as const,
    buckets: [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1],
    registers: [registry],
  });

  const validationFailures = new Counter({
    name: 'toolgate_validation_failures_total',
    help: 'Refused tools/call arguments, by failing JSON Schema keyword (each keyword once per refusal; unknown keywords as other).',
    labelNames: ['keyword'] as const,
    registers: [registry],
  });

  const discoveryDuration = new Histogram({
    name: 'toolgate_discovery_duration_seconds',
    help: 'Discovery searches (toolgate/discover and search_tools) that returned a page, from parsing to the rendered page.',
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });

  const discoveryResults = new Histogram({
    name: 'toolgate_discovery_results',
    help: 'Tools returned per discovery page.',
    buckets: [0, 1, 2, 4, 8, 16],
    registers: [registry],
  });

  // Bound children per stage. An allowed, enforced decision (nearly all of them) is found by its rule
  // alone, and a stage's calls are mostly decided by one row: the last one's counter is kept at hand.
  interface StageChildren {
    readonly duration: { observe(v: number): void };
    readonly allowed: Map<string, { inc(): void }>;
    readonly other: Map<string, { inc(): void }>;
    lastRule: string | undefined;
    lastAllowed: { inc(): void } | undefined;
  }
  const stages = new Map<string, StageChildren>();
  const onDecision = (d: Decision) => {
    let children = stages.get(d.stage);
    if (children === undefined) {
      children = {
        duration: decisionDuration.bind(d.stage),
        allowed: new Map(),
        other: new Map(),
        lastRule: undefined,
        lastAllowed: undefined,
      };
      stages.set(d.stage, children);
    }
    children.duration.observe(d.durationSeconds);
    const rule = d.rule ?? '';
    if (d.allowed && d.mode === undefined) {
      if (rule !== children.lastRule || children.lastAllowed === undefined) {
        let counter = children.allowed.get(rule);
        if (counter === undefined)
          children.allowed.set(rule, (counter = decisions.bind(d.stage, 'allow', 'enforce', rule)));
        children.lastRule = rule;
        children.lastAllowed = counter;
      }
      children.lastAllowed.inc();
      return;
    }
    const outcome = d.allowed ? 'allow' : (d.error ?? 'deny');
    const mode = d.mode ?? 'enforce';
    const key = `${outcome}\u0000${mode}\u0000${rule}`;
    let counter = children.other.get(key);
    if (counter === undefined) children.other.set(key, (counter = decisions.bind(d.stage, outcome, mode, rule)));
    counter.inc();
    if (d.keywords !== undefined) for (const k of keywordLabels(d.keywords)) validationFailures.labels(k).inc();
  };

  const onDiscovery = (d: DiscoveryDone) => {
    discoveryDuration.observe(d.durationSeconds);
    discoveryResults.observe(d.results);
  };
  return [on(decision, onDecision), on(discovery, onDiscovery)];
}
