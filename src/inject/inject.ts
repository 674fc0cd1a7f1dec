/**
 * Decides whether a pod gets the toolgate sidecar and builds the JSONPatch
 * that adds it. Pure and total: anything it does not understand is a skip
 * with a reason, so the pod is admitted unchanged rather than broken.
 *
 * Port takeover: the app container's port named `mcp` (or the configured
 * name) is renamed `mcp-upstream`, and toolgate's container gets a port named
 * `mcp` on its own number. Services that target the port by name now reach
 * toolgate; toolgate forwards to the app on 127.0.0.1 at the original number.
 * The app's probes that referenced the old name are pointed at the new one.
 */
import { ANNOTATIONS, optIn, readOptions } from './annotations.ts';
import type { InjectorConfig } from './config.ts';
import { isRecord } from '../json/record.ts';
import { isPortNumber, pointerToken } from './k8s.ts';
import type { Json, PatchOp } from './k8s.ts';
import { ADMIN_PORT_NAME, CONTAINER_NAME, sidecarContainer, sidecarVolumes } from './sidecar.ts';

export const UPSTREAM_PORT_NAME = 'mcp-upstream';

export type Injection =
  | { readonly kind: 'patch'; readonly patch: readonly PatchOp[]; readonly warnings: readonly string[] }
  /** `warn`: the pod asked for injection (or is malformed) and the user should hear why it did not happen. */
  | { readonly kind: 'skip'; readonly reason: string; readonly warn: boolean };

interface PortRef {
  readonly list: 'containers' | 'initContainers';
  readonly container: number;
  readonly containerName: string;
  readonly index: number;
  readonly name: string | undefined;
  readonly number: number;
  readonly protocol: string;
}

const skip = (reason: string, warn = true): Injection => ({ kind: 'skip', reason, warn });
const DEFAULT_GRACE_SECONDS = 30;
const PROBES = ['livenessProbe', 'readinessProbe', 'startupProbe'] as const;

export function planInjection(pod: unknown, config: InjectorConfig): Injection {
  if (!isRecord(pod) || !isRecord(pod.spec) || !Array.isArray(pod.spec.containers) || pod.spec.containers.length === 0) {
    return skip('the object is not a pod with containers');
  }
  const metadata = isRecord(pod.metadata) ? pod.metadata : {};
  const opt = optIn(metadata.labels, metadata.annotations);
  if (opt === 'absent') return skip('the pod did not opt in', false);
  if (opt === 'out') return skip('the pod opted out', false);
  if (opt === 'invalid') return skip(`${ANNOTATIONS.inject} must be "true" or "false"`);

  const spec = pod.spec;
  if (spec.hostNetwork === true) return skip('pods on the host network are not injected: toolgate would bind node ports');
  const lists = { containers: spec.containers as unknown[], initContainers: Array.isArray(spec.initContainers) ? spec.initContainers as unknown[] : [] };
  if (spec.initContainers !== undefined && !Array.isArray(spec.initContainers)) return skip('the pod spec is not understood');
  const ports: PortRef[] = [];
  for (const list of ['containers', 'initContainers'] as const) {
    for (const [ci, c] of lists[list].entries()) {
      if (!isRecord(c) || typeof c.name !== 'string') return skip('the pod spec is not understood');
      if (c.name === CONTAINER_NAME) return skip('toolgate is already injected', false);
      if (c.ports === undefined) continue;
      if (!Array.isArray(c.ports)) return skip('the pod spec is not understood');
      for (const [pi, p] of c.ports.entries()) {
        if (!isRecord(p) || !isPortNumber(p.containerPort)) return skip('the pod spec is not understood');
        ports.push({
          list, container: ci, containerName: c.name, index: pi, number: p.containerPort,
          name: typeof p.name === 'string' ? p.name : undefined,
          protocol: typeof p.protocol === 'string' ? p.protocol : 'TCP',
        });
      }
    }
  }

  const read = readOptions(metadata.annotations);
  if (!read.ok) return skip(read.reason);
  const options = read.options;
  const portName = options.portName ?? config.portName;
  const proxyPort = options.proxyPort ?? config.proxyPort;
  const adminPort = options.adminPort ?? config.adminPort;

  if (portName === UPSTREAM_PORT_NAME || portName === ADMIN_PORT_NAME) return skip(`${ANNOTATIONS.portName} names a port toolgate reserves`);
  const named = ports.filter((p) => p.name === portName);
  if (named.length > 1) return skip(`more than one container port is named ${portName}`);
  const target = named[0];
  if (target !== undefined && target.list !== 'containers') return skip(`the port named ${portName} belongs to an init container`);
  if (target !== undefined && target.protocol !== 'TCP') return skip(`the port named ${portName} is not TCP`);
  if (target !== undefined && options.upstreamPort !== undefined && options.upstreamPort !== target.number) {
    return skip(`${ANNOTATIONS.upstreamPort} disagrees with the port named ${portName}`);
  }
  const upstreamPort = target?.number ?? options.upstreamPort;
  if (upstreamPort === undefined) return skip(`no container port is named ${portName} and ${ANNOTATIONS.upstreamPort} is not set`);
  if (proxyPort === adminPort) return skip(`${ANNOTATIONS.proxyPort} and ${ANNOTATIONS.adminPort} must differ`);

  for (const taken of [UPSTREAM_PORT_NAME, ADMIN_PORT_NAME]) {
    if (ports.some((p) => p.name === taken) && (taken !== UPSTREAM_PORT_NAME || target !== undefined)) {
      return skip(`the port name ${taken} is already used in the pod`);
    }
  }
  for (const [port, annotation] of [[proxyPort, ANNOTATIONS.proxyPort], [adminPort, ANNOTATIONS.adminPort]] as const) {
    const clash = ports.find((p) => p.number === port);
    if (clash !== undefined || port === upstreamPort) {
      return skip(`port ${port} is already used in the pod; choose another with ${annotation}`);
    }
  }

  const volumes = sidecarVolumes(config, options);
  const existingVolumes = Array.isArray(spec.volumes) ? spec.volumes : [];
  if (spec.volumes !== undefined && !Array.isArray(spec.volumes)) return skip('the pod spec is not understood');
  const volumeNames = new Set(existingVolumes.map((v) => (isRecord(v) ? v.name : undefined)));
  const clashingVolume = volumes.find((v) => volumeNames.has(v.name as string));
  if (clashingVolume !== undefined) return skip(`the volume name ${clashingVolume.name as string} is already used in the pod`);

  const patch: PatchOp[] = [];
  if (target !== undefined) {
    const base = `/spec/containers/${target.container}`;
    patch.push({ op: 'replace', path: `${base}/ports/${target.index}/name`, value: UPSTREAM_PORT_NAME });
    patch.push(...renameProbePorts(lists.containers[target.container] as Record<string, unknown>, base, portName));
  }
  patch.push({
    op: 'add', path: '/spec/containers/-',
    value: sidecarContainer(config, { portName, upstreamPort, proxyPort, adminPort, options }),
  });
  if (volumes.length > 0) {
    if (spec.volumes === undefined) patch.push({ op: 'add', path: '/spec/volumes', value: volumes });
    else for (const v of volumes) patch.push({ op: 'add', path: '/spec/volumes/-', value: v });
  }
  const status = `/metadata/annotations`;
  if (isRecord(metadata.annotations)) patch.push({ op: 'add', path: `${status}/${pointerToken(ANNOTATIONS.status)}`, value: 'injected' });
  else patch.push({ op: 'add', path: status, value: { [ANNOTATIONS.status]: 'injected' } });

  const warnings: string[] = [];
  if (options.policyConfigMap === undefined) {
    warnings.push(`no ${ANNOTATIONS.policyConfigMap}: toolgate forwards every request without enforcing policy`);
  }
  const grace = typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : DEFAULT_GRACE_SECONDS;
  if (options.drainTimeoutMs !== undefined && options.drainTimeoutMs >= grace * 1000) {
    warnings.push(`${ANNOTATIONS.drainTimeoutMs} is not below terminationGracePeriodSeconds; drains will be cut short`);
  }
  return { kind: 'patch', patch, warnings };
}

/** A probe or lifecycle hook that named the taken-over port would stop resolving; it follows the rename. */
function renameProbePorts(container: Record<string, unknown>, base: string, portName: string): PatchOp[] {
  const ops: PatchOp[] = [];
  const visit = (handler: unknown, path: string) => {
    if (!isRecord(handler)) return;
    for (const kind of ['httpGet', 'tcpSocket'] as const) {
      const action = handler[kind];
      if (isRecord(action) && action.port === portName) {
        ops.push({ op: 'replace', path: `${path}/${kind}/port`, value: UPSTREAM_PORT_NAME as Json });
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
