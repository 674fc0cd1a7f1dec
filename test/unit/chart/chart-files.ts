/** Paths and loaders shared by the chart checks. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export const REPO = join(import.meta.dirname, '../../..');
export const CHART = join(REPO, 'charts/toolgate');
export const EXAMPLES = ['cert-manager-sentinel', 'redis-cluster', 'serviceaccount-tokens'] as const;

/** Every folder under deploy/ that holds a kustomization.yaml, sorted. */
export function deployKustomizations(dir = join(REPO, 'deploy')): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => {
      if (e.isDirectory()) return deployKustomizations(join(dir, e.name));
      return e.name === 'kustomization.yaml' ? [dir] : [];
    })
    .sort();
}

export const readText = (path: string): string => readFileSync(join(CHART, path), 'utf8');
export const readYaml = (path: string): any => parse(readText(path), { version: '1.2' });

/**
 * Every value a user can set, as dotted paths: the chart's own objects are
 * walked; lists, maps and Kubernetes-typed objects (a schema `title`) are
 * values in their own right.
 */
export function valuePaths(value: unknown, schema: any, prefix = ''): string[] {
  const leaf =
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    schema?.properties === undefined ||
    (prefix !== '' && schema.title !== undefined);
  if (leaf) return [prefix];
  return Object.entries(value).flatMap(([k, v]) =>
    valuePaths(v, schema.properties[k], prefix === '' ? k : `${prefix}.${k}`),
  );
}

/** Metric names an expression uses, with histogram suffixes folded into their family. */
export function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\btoolgate_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, ''));
}

/** Metric names in one generated README table: the sidecar's (`metrics`) or the injector's (`injector-metrics`). */
export function knownMetrics(table: 'metrics' | 'injector-metrics' = 'metrics'): Set<string> {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const section = new RegExp(`<!-- ${table}:begin -->\\n([\\s\\S]*?)\\n<!-- ${table}:end -->`).exec(readme)?.[1] ?? '';
  return new Set([...section.matchAll(/^\| `(toolgate_[a-z_]+)` \|/gm)].map((m) => m[1] as string));
}
