import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { CHART, REPO, readText } from './chart-files.ts';
import { alertRules, dashboardExprs, RULES_PATH } from './monitoring-files.ts';

const CASES = join(import.meta.dirname, 'toolgate.rules.promtool.yaml');
const cases = parse(readFileSync(CASES, 'utf8'));

function run(args: readonly string[]): { status: number | null; output: string } {
  const r = spawnSync('promtool', args, { encoding: 'utf8' });
  return { status: r.error === undefined ? r.status : null, output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

const present = run(['--version']).status === 0;

describe('promtool test cases for the alert rules', () => {
  it('load the rule file the chart ships', () => {
    assert.deepEqual(
      cases.rule_files.map((f: string) => resolve(import.meta.dirname, f)),
      [join(CHART, RULES_PATH)],
    );
  });

  it('hold, for every alert, a case where it fires and a case where it stays silent', () => {
    const firing = new Set<string>();
    const silent = new Set<string>();
    for (const t of cases.tests) {
      const pods = new Set(t.input_series.map((s: { series: string }) => /pod="([^"]+)"/.exec(s.series)?.[1]));
      for (const a of t.alert_rule_test) {
        const fired = new Set((a.exp_alerts ?? []).map((e: { exp_labels: { pod: string } }) => e.exp_labels.pod));
        if (fired.size > 0) firing.add(a.alertname);
        if ([...pods].some((p) => !fired.has(p))) silent.add(a.alertname);
      }
    }
    const names = alertRules().map((r) => r.alert);
    assert.deepEqual(
      names.filter((n) => !firing.has(n)),
      [],
      'alerts without a firing case',
    );
    assert.deepEqual(
      names.filter((n) => !silent.has(n)),
      [],
      'alerts without a silent case',
    );
  });
});

describe('promtool', { skip: present ? false : 'no promtool on PATH (Debian: apt-get install prometheus)' }, () => {
  it('checks the rule file', () => {
    const r = run(['check', 'rules', join(CHART, RULES_PATH)]);
    assert.equal(r.status, 0, r.output);
  });

  it('passes the unit tests of every alert', () => {
    const r = run(['test', 'rules', CASES]);
    assert.equal(r.status, 0, r.output);
  });

  it("parses every dashboard query and every runbook's PromQL", () => {
    const dashboard = JSON.parse(readText('files/dashboards/toolgate-sidecars.json'));
    // Grafana's variables and the runbooks' placeholders, made concrete so promtool can parse them.
    const concrete = (e: string) =>
      e
        .replaceAll('$__rate_interval', '5m')
        .replaceAll('$namespace', '.*')
        .replaceAll('$pod', '.*')
        .replaceAll('<ns>', 'ns')
        .replaceAll('<pod>', 'pod');
    const runbooks = readFileSync(join(REPO, 'docs/runbooks.md'), 'utf8');
    const blocks = [...runbooks.matchAll(/```promql\n([\s\S]*?)```/g)].map((m) => m[1] as string);
    const inline = [...runbooks.matchAll(/`((?:sum|max|min|histogram_quantile|rate)\b[^`]*)`/g)].map(
      (m) => m[1] as string,
    );
    const exprs = [...dashboardExprs(dashboard), ...blocks, ...inline].map(concrete);
    assert.ok(inline.length >= 5, 'the runbooks carry inline queries');
    const rules = exprs
      .map((e, i) => `      - record: check:expr${i}\n        expr: ${JSON.stringify(e.trim())}\n`)
      .join('');
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-promql-'));
    try {
      const file = join(dir, 'queries.yaml');
      writeFileSync(file, `groups:\n  - name: queries\n    rules:\n${rules}`);
      const r = run(['check', 'rules', file]);
      assert.equal(r.status, 0, r.output);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
