/** Readers for the chart's alert rules, its dashboard and the runbooks, shared by the monitoring checks. */
import { parse } from 'yaml';
import { readText } from './chart-files.ts';

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

export const RULES_PATH = 'files/rules/toolgate.rules.yaml';

export function alertRules(): AlertRule[] {
  return parse(readText(RULES_PATH)).groups.flatMap((g: { rules: AlertRule[] }) => g.rules);
}

export function dashboardExprs(dashboard: { panels: { targets?: { expr: string }[] }[] }): string[] {
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
}

/** Every value a label matcher (`=`, `!=`, `=~`, `!~`) names, regex alternatives split apart. */
export function matcherValues(expr: string, label: string): string[] {
  return [...expr.matchAll(new RegExp(`\\b${label}\\s*(?:=~|!~|!=|=)\\s*"([^"]*)"`, 'g'))].flatMap((m) =>
    (m[1] as string).split('|'),
  );
}

/** Markdown `## ` sections by heading. */
export function runbookSections(markdown: string): Map<string, string> {
  return new Map(
    markdown
      .split(/^## /m)
      .slice(1)
      .map((s) => {
        const end = s.indexOf('\n');
        return [s.slice(0, end).trim(), s.slice(end + 1)];
      }),
  );
}

export function sameExpr(a: string, b: string): boolean {
  const norm = (e: string) => e.replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/ \)/g, ')').trim();
  return norm(a) === norm(b);
}
