/**
 * The JSONPatch operations that add the sidecar: the app port's new name and
 * the probes that followed it, the marks on the pod, and the appended
 * containers and volumes. Pure; the decision to patch is made before.
 */
import { ANNOTATIONS } from './annotations.ts';
import { isRecord } from '../json/record.ts';
import { pointerToken } from './k8s.ts';
import type { JsonObject, PatchOp } from './k8s.ts';
import type { PortRef } from './pod.ts';
import { UPSTREAM_PORT_NAME } from './takeover.ts';

/** Added by the patch, so monitors and NetworkPolicies can select pods that really carry the sidecar. */
export const INJECTED_LABEL = 'toolgate.dev/injected';

const PROBES = ['livenessProbe', 'readinessProbe', 'startupProbe'] as const;

/** The taken-over port gets the upstream name (a nameless one gains it); probes that named it follow. */
export function renameOps(target: PortRef | undefined): PatchOp[] {
  if (target === undefined) return [];
  const base = `/spec/containers/${target.container.index}`;
  const rename: PatchOp = {
    op: target.name === undefined ? 'add' : 'replace',
    path: `${base}/ports/${target.index}/name`,
    value: UPSTREAM_PORT_NAME,
  };
  return target.name === undefined ? [rename] : [rename, ...renameProbePorts(target.container.spec, base, target.name)];
}

export function markOps(metadata: Readonly<Record<string, unknown>>): PatchOp[] {
  const ops: PatchOp[] = [];
  const mark = (map: 'labels' | 'annotations', key: string, value: string) => {
    if (isRecord(metadata[map])) ops.push({ op: 'add', path: `/metadata/${map}/${pointerToken(key)}`, value });
    else ops.push({ op: 'add', path: `/metadata/${map}`, value: { [key]: value } });
  };
  mark('labels', INJECTED_LABEL, 'true');
  mark('annotations', ANNOTATIONS.status, 'injected');
  return ops;
}

export function appendOps(
  spec: Readonly<Record<string, unknown>>,
  list: 'initContainers' | 'containers' | 'volumes',
  items: readonly JsonObject[],
): PatchOp[] {
  if (items.length === 0) return [];
  if (!Array.isArray(spec[list])) return [{ op: 'add', path: `/spec/${list}`, value: items }];
  return items.map((value) => ({ op: 'add', path: `/spec/${list}/-`, value }));
}

/** A probe or lifecycle hook that named the taken-over port would stop resolving; it follows the rename. */
function renameProbePorts(container: Readonly<Record<string, unknown>>, base: string, portName: string): PatchOp[] {
  const ops: PatchOp[] = [];
  const visit = (handler: unknown, path: string) => {
    if (!isRecord(handler)) return;
    for (const kind of ['httpGet', 'tcpSocket'] as const) {
      const action = handler[kind];
      if (isRecord(action) && action.port === portName) {
        ops.push({ op: 'replace', path: `${path}/${kind}/port`, value: UPSTREAM_PORT_NAME });
      }
    }
  };
  for (const probe of PROBES) visit(container[probe], `${base}/${probe}`);
  const lifecycle = container.lifecycle;
  if (isRecord(lifecycle)) {
    for (const hook of ['postStart', 'preStop'] as const) visit(lifecycle[hook], `${base}/lifecycle/${hook}`);
  }
  return ops;
}
