/**
 * The CustomResourceDefinitions of the operators the chart can use, taken from
 * their own releases on the Go module proxy (each module ships its CRDs as
 * YAML): prometheus-operator's for PodMonitor, ServiceMonitor and
 * PrometheusRule, cert-manager's for Certificate and Issuer. Installed into a
 * test control plane, they let the API server check the chart's objects
 * against the real schemas.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const OPERATORS = {
  'prometheus-operator': {
    module: 'github.com/prometheus-operator/prometheus-operator@v0.85.0',
    files: ['podmonitors', 'servicemonitors', 'prometheusrules'].map(
      (k) => `example/prometheus-operator-crd/monitoring.coreos.com_${k}.yaml`,
    ),
  },
  'cert-manager': {
    module: 'github.com/cert-manager/cert-manager@v1.21.2',
    files: ['certificates', 'issuers'].map((k) => `deploy/crds/cert-manager.io_${k}.yaml`),
  },
} as const;
export type Operator = keyof typeof OPERATORS;

/** Paths of one operator's CRD files, downloaded into the Go module cache once. */
export function crdFiles(operator: Operator): string[] {
  const { module, files } = OPERATORS[operator];
  const dir = (
    JSON.parse(
      execFileSync('go', ['mod', 'download', '-json', module], { encoding: 'utf8', cwd: import.meta.dirname }),
    ) as { Dir: string }
  ).Dir;
  return files.map((f) => join(dir, f));
}

/** Every operator's files, so `.ci/run` fetches them with the binaries. */
export const allCrdFiles = (): string[] => (Object.keys(OPERATORS) as Operator[]).flatMap(crdFiles);
