/**
 * The parts of an untrusted pod spec the injector reasons about: its
 * containers (regular and init) and their declared ports, each with the
 * Kubernetes field path that names it in a refusal. Pure and total: a shape it
 * cannot read is reported with the path where reading stopped.
 */
import { isRecord } from '../json/record.ts';
import { isPortNumber } from './k8s.ts';

type ContainerList = 'containers' | 'initContainers';

export interface ContainerRef {
  readonly list: ContainerList;
  readonly index: number;
  readonly name: string;
  readonly restartPolicy: unknown;
  readonly spec: Readonly<Record<string, unknown>>;
}

export interface PortRef {
  readonly container: ContainerRef;
  readonly index: number;
  readonly name: string | undefined;
  readonly number: number;
  readonly protocol: string;
  readonly hostPort: boolean;
}

export type PodShape =
  | { readonly ok: true; readonly containers: readonly ContainerRef[]; readonly ports: readonly PortRef[] }
  | { readonly ok: false; readonly field: string };

export const containerField = (c: Pick<ContainerRef, 'list' | 'index'>): string => `spec.${c.list}[${c.index}]`;
export const portField = (p: PortRef): string => `${containerField(p.container)}.ports[${p.index}]`;

export function readPodShape(spec: Readonly<Record<string, unknown>>): PodShape {
  const containers: ContainerRef[] = [];
  const ports: PortRef[] = [];
  for (const list of ['containers', 'initContainers'] as const) {
    const items = spec[list];
    if (items === undefined && list === 'initContainers') continue;
    if (!Array.isArray(items) || (list === 'containers' && items.length === 0))
      return { ok: false, field: `spec.${list}` };
    for (const [index, c] of items.entries()) {
      // The API server sends a container without a name as `name: ""` (the field has no omitempty).
      if (!isRecord(c) || typeof c.name !== 'string' || c.name === '')
        return { ok: false, field: containerField({ list, index }) };
      const container: ContainerRef = { list, index, name: c.name, restartPolicy: c.restartPolicy, spec: c };
      containers.push(container);
      if (c.ports === undefined) continue;
      if (!Array.isArray(c.ports)) return { ok: false, field: `${containerField(container)}.ports` };
      for (const [pi, p] of c.ports.entries()) {
        if (!isRecord(p) || !isPortNumber(p.containerPort))
          return { ok: false, field: `${containerField(container)}.ports[${pi}]` };
        ports.push({
          container,
          index: pi,
          number: p.containerPort,
          name: typeof p.name === 'string' ? p.name : undefined,
          protocol: typeof p.protocol === 'string' ? p.protocol : 'TCP',
          hostPort: p.hostPort !== undefined && p.hostPort !== 0,
        });
      }
    }
  }
  return { ok: true, containers, ports };
}

/** A container that runs beside the app for the pod's whole life: a regular one, or a native sidecar. */
export const isLongRunning = (c: ContainerRef): boolean => c.list === 'containers' || c.restartPolicy === 'Always';
