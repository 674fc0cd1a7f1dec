import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { errors } from '../../../src/errors.ts';
import { createInjectorMetrics } from '../../../src/inject/metrics.ts';
import { OUTCOMES as INJECTOR_OUTCOMES } from '../../../src/inject/review.ts';
import { createMetrics } from '../../../src/telemetry/metrics/metrics.ts';
import { CHART, REPO, knownMetrics, metricNames, readText, readYaml } from './chart-files.ts';
import { alertRules, dashboardExprs, matcherValues, runbookSections, sameExpr } from './monitoring-files.ts';

const live = createMetrics();
after(() => live.dispose());
/** What a live /metrics exposes, the sidecar's or the injector's: their own metrics and the prefixed Node.js defaults. */
const exported = new Set(
  [...live.registry.getMetricsAsArray(), ...createInjectorMetrics().registry.getMetricsAsArray()].map((m) => m.name),
);
const listed = knownMetrics();
const listedForInjector = knownMetrics('injector-metrics');
const unexported = (names: readonly string[]) =>
  names.filter(
    (m) => !exported.has(m) || (!m.startsWith('toolgate_process_') && !listed.has(m) && !listedForInjector.has(m)),
  );

const dashboard = JSON.parse(readText('files/dashboards/toolgate-sidecars.json'));
const panels: any[] = dashboard.panels;
const rules = alertRules();
const runbooks = readFileSync(join(REPO, 'docs/runbooks.md'), 'utf8');

const ERROR_IDS = Object.keys(errors);
const SERVER_ERROR_IDS = Object.entries(errors)
  .filter(([, d]) => d.status >= 500)
  .map(([id]) => id);
/** Outcomes of requests, decisions, reloads and audit events that are not registry ids. */
const OTHER_OUTCOMES = new Set([
  'forwarded',
  'answered',
  'client_closed',
  'aborted',
  'allow',
  'deny',
  'applied',
  'rejected',
  'unchanged',
  'queued',
  'dropped',
  ...INJECTOR_OUTCOMES,
]);
const UPSTREAM_CODES = new Set([...ERROR_IDS, 'status_5xx', 'client_closed']);

describe('the Grafana dashboard', () => {
  it('is a schema-39 dashboard with data source, namespace and pod variables', () => {
    assert.equal(dashboard.uid, 'toolgate-sidecars');
    assert.equal(dashboard.schemaVersion, 39);
    const vars = Object.fromEntries(dashboard.templating.list.map((v: any) => [v.name, v]));
    assert.equal(vars.datasource?.type, 'datasource');
    assert.equal(vars.datasource?.query, 'prometheus');
    for (const name of ['namespace', 'pod']) {
      assert.equal(vars[name]?.type, 'query', name);
      assert.equal(vars[name].datasource.uid, '${datasource}', name);
      assert.ok(vars[name].multi && vars[name].includeAll, name);
      assert.deepEqual(unexported(metricNames(vars[name].definition)), [], name);
    }
    assert.match(vars.pod.definition, /namespace=~"\$namespace"/);
  });

  it('has unique panel ids, fits the 24-column grid, and no two panels overlap', () => {
    const ids = panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) assert.ok(Number.isInteger(id) && id > 0);
    for (const { gridPos: g, title } of panels) {
      assert.ok(g.x >= 0 && g.y >= 0 && g.w > 0 && g.h > 0 && g.x + g.w <= 24, title);
    }
    for (const [i, a] of panels.entries()) {
      for (const b of panels.slice(i + 1)) {
        const A = a.gridPos;
        const B = b.gridPos;
        const overlap = A.x < B.x + B.w && B.x < A.x + A.w && A.y < B.y + B.h && B.y < A.y + A.h;
        assert.ok(!overlap, `${a.title} overlaps ${b.title}`);
      }
    }
  });

  it('queries the chosen data source, namespace and pods in every target', () => {
    for (const p of panels.filter((panel) => panel.type !== 'row')) {
      assert.ok(['stat', 'timeseries'].includes(p.type), p.title);
      assert.equal(p.datasource.uid, '${datasource}', p.title);
      assert.ok(p.targets.length > 0, p.title);
      assert.equal(new Set(p.targets.map((t: any) => t.refId)).size, p.targets.length, p.title);
      for (const t of p.targets) {
        assert.equal(t.datasource.uid, '${datasource}', p.title);
        const selectors = [...t.expr.matchAll(/\b(toolgate_[a-z0-9_]+|up)\b(\{[^}]*\})?/g)];
        assert.ok(selectors.length > 0, p.title);
        for (const [, name, labels] of selectors) {
          assert.match(labels ?? '', /namespace=~"\$namespace", pod=~"\$pod"/, `${p.title}: ${name}`);
        }
      }
    }
  });

  it('queries only metrics a live /metrics exposes, and every metric the README lists', () => {
    const used = dashboardExprs(dashboard).flatMap(metricNames);
    assert.deepEqual(unexported(used), []);
    assert.ok(listed.size >= 19, 'the README metric table was read');
    assert.ok(listedForInjector.has('toolgate_injector_reviews_total'), 'the README injector metric table was read');
    assert.deepEqual(
      [...listed].filter((m) => !used.includes(m)),
      [],
    );
  });

  it('has a row for each area an operator looks at', () => {
    const rows = new Set(panels.filter((p) => p.type === 'row').map((p) => p.title));
    for (const r of ['Traffic', 'Latency', 'Decisions', 'Upstream health', 'Policy freshness', 'Discovery', 'Audit'])
      assert.ok(rows.has(r), r);
  });
});

describe('the alert rules', () => {
  const required = [
    'ToolgateHighErrorRatio',
    'ToolgateHighLatencyP99',
    'ToolgateGrantRevisionStale',
    'ToolgatePolicyReloadFailing',
    'ToolgateUpstreamDown',
    'ToolgateAuditEventsDropped',
    'ToolgateInjectorDenials',
  ];

  it('include error ratio, p99 latency, revision staleness, reload failures, upstream down, audit drops and injector denials', () => {
    const names = rules.map((r) => r.alert);
    for (const name of required) assert.ok(names.includes(name), name);
    assert.equal(new Set(names).size, names.length);
  });

  it('each have a severity, a summary, a description and a runbook_url to their section', () => {
    const home = readYaml('Chart.yaml').home as string;
    for (const r of rules) {
      assert.match(r.alert, /^Toolgate[A-Za-z0-9]+$/);
      assert.ok(['warning', 'critical'].includes(r.labels.severity ?? ''), r.alert);
      assert.equal(typeof r.annotations.summary, 'string', r.alert);
      assert.equal(typeof r.annotations.description, 'string', r.alert);
      assert.equal(r.annotations.runbook_url, `${home}/blob/main/docs/runbooks.md#${r.alert.toLowerCase()}`);
    }
  });

  it('template only the namespace, the pod and the value into their annotations', () => {
    for (const r of rules) {
      for (const text of Object.values(r.annotations)) {
        const refs = [...text.matchAll(/\{\{([^}]*)\}\}/g)].map((m) => (m[1] as string).trim().split(/\s+/)[0]);
        assert.deepEqual(
          refs.filter((x) => !['$labels.namespace', '$labels.pod', '$value'].includes(x as string)),
          [],
          r.alert,
        );
      }
    }
  });

  it('are read by the chart from files/', () => {
    assert.match(readText('templates/prometheusrule.yaml'), /Files\.Glob "files\/rules\/\*\.yaml"/);
    assert.match(readText('templates/dashboards-configmap.yaml'), /Files\.Glob "files\/dashboards\/\*\.json"/);
    assert.ok(CHART.endsWith('charts/toolgate'));
  });

  it('use only metrics a live /metrics exposes', () => {
    for (const r of rules) assert.deepEqual(unexported(metricNames(r.expr)), [], r.alert);
  });

  it("count exactly the registry's 5xx errors in the error ratio", () => {
    const ratio = rules.find((r) => r.alert === 'ToolgateHighErrorRatio');
    assert.ok(ratio);
    assert.deepEqual(matcherValues(ratio.expr, 'outcome').sort(), [...SERVER_ERROR_IDS].sort());
  });

  it('match only label values toolgate emits (rules, dashboard and runbooks)', () => {
    const exprs = [...rules.map((r) => r.expr), ...dashboardExprs(dashboard), runbooks];
    const outcomes = exprs.flatMap((e) => matcherValues(e, 'outcome'));
    const codes = exprs.flatMap((e) => matcherValues(e, 'code'));
    assert.ok(outcomes.length > 0 && codes.length > 0);
    assert.deepEqual(
      outcomes.filter((o) => !ERROR_IDS.includes(o) && !OTHER_OUTCOMES.has(o)),
      [],
    );
    assert.deepEqual(
      codes.filter((c) => !UPSTREAM_CODES.has(c)),
      [],
    );
  });
});

describe('the runbooks', () => {
  const sections = runbookSections(runbooks);

  it('have one section per alert, opening with the PromQL the alert evaluates', () => {
    assert.deepEqual(
      [...sections.keys()].filter((t) => t.startsWith('Toolgate')).sort(),
      rules.map((r) => r.alert).sort(),
    );
    for (const r of rules) {
      const first = /```promql\n([\s\S]*?)```/.exec(sections.get(r.alert) ?? '');
      assert.ok(first, r.alert);
      assert.ok(sameExpr(first[1] as string, r.expr), `${r.alert}: the runbook PromQL differs from the rule`);
      assert.match(
        runbooks,
        new RegExp(`\\[${r.alert}\\]\\(#${r.alert.toLowerCase()}\\)`),
        `${r.alert} is in the table`,
      );
    }
  });

  it('name only metrics a live /metrics exposes', () => {
    assert.deepEqual(unexported(metricNames(runbooks)), []);
  });
});
