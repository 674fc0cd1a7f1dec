/**
 * Decides what happens to a pod at creation and builds the JSONPatch that
 * adds the sidecar. Pure and total. A pod that did not opt in is skipped; a
 * pod that opted in either gets a patch that puts toolgate in front of its MCP
 * port or is refused with the field at fault and how to fix it. It is never
 * admitted without toolgate, since a Service and a NetworkPolicy that target
 * the port by name would then reach the unprotected server.
 *
 * Port takeover: the app container's port named `mcp` (or the configured
 * name) is renamed `mcp-upstream`, and toolgate's container gets a port named
 * `mcp` on its own number. Services that target the port by name now reach
 * toolgate; toolgate forwards to the app on 127.0.0.1 at the original number.
 * The app's probes that referenced the old name are pointed at the new one.
 */
import { ANNOTATIONS, optIn, readOptions } from './annotations.ts';
import type { PodOptions } from './annotations.ts';
import type { InjectorConfig } from './config.ts';
import { isRecord } from '../json/record.ts';
import { pointerToken, stringMap } from './k8s.ts';
import type { Json, JsonObject, PatchOp } from './k8s.ts';
import { containerField, isLongRunning, portField, readPodShape } from './pod.ts';
import type { ContainerRef, PortRef } from './pod.ts';
import { REDIRECT_CONTAINER_NAME, redirectContainer } from './redirect.ts';
import { ADMIN_PORT_NAME, CONTAINER_NAME, sidecarContainer, sidecarVolumes } from './sidecar.ts';

export const UPSTREAM_PORT_NAME = 'mcp-upstream';
/** Added by the patch, so monitors and NetworkPolicies can select pods that really carry the sidecar. */
export const INJECTED_LABEL = 'toolgate.dev/injected';

export type Injection =
  | { readonly kind: 'patch'; readonly patch: readonly PatchOp[]; readonly warnings: readonly string[] }
  /** The pod is admitted as it is: it did not opt in, or toolgate is already in front of its port. */
  | { readonly kind: 'skip'; readonly reason: string }
  /** `field` is the Kubernetes field path at fault; `message` says what is wrong and how to fix it. */
  | { readonly kind: 'deny'; readonly field: string; readonly message: string };

const skip = (reason: string): Injection => ({ kind: 'skip', reason });
const deny = (field: string, message: string): Injection => ({ kind: 'deny', field, message });
const annotationField = (annotation: string): string => `metadata.annotations[${annotation}]`;

const DEFAULT_GRACE_SECONDS = 30;
const PROBES = ['livenessProbe', 'readinessProbe', 'startupProbe'] as const;
const OWN_CONTAINERS: ReadonlySet<string> = new Set([CONTAINER_NAME, REDIRECT_CONTAINER_NAME]);

export function planInjection(pod: unknown, config: InjectorConfig): Injection {
  if (!isRecord(pod)) return skip('the object is not a pod');
  const metadata = isRecord(pod.metadata) ? pod.metadata : {};
  const opt = optIn(metadata.labels, metadata.annotations);
  if (opt === 'absent') return skip('the pod did not opt in');
  if (opt === 'out') return skip('the pod opted out');
  if (opt === 'conflict') {
    return deny(`metadata.annotations[${ANNOTATIONS.inject}]`,
      `the label and the annotation ${ANNOTATIONS.inject} disagree: to opt out, set the label to "false" or remove it; to opt in, remove the annotation`);
  }
  if (opt === 'invalid') {
    const where = ['true', 'false', undefined].includes(stringMap(metadata.labels).get(ANNOTATIONS.inject)) ? 'annotations' : 'labels';
    return deny(`metadata.${where}[${ANNOTATIONS.inject}]`, `${ANNOTATIONS.inject} must be "true" or "false"`);
  }

  const spec = pod.spec;
  if (!isRecord(spec)) return deny('spec', 'the pod has no spec toolgate can read');
  if (spec.hostNetwork === true) {
    return deny('spec.hostNetwork', `toolgate cannot be injected into a pod on the host network (it would bind node ports): run the pod without hostNetwork or remove ${ANNOTATIONS.inject}`);
  }
  const shape = readPodShape(spec);
  if (!shape.ok) return deny(shape.field, `toolgate cannot read ${shape.field}: every container needs a name and every port a containerPort from 1 to 65535`);

  const read = readOptions(metadata.annotations);
  if (!read.ok) return deny(annotationField(read.annotation), `annotation ${read.annotation} must be ${read.expected}: correct it or remove it`);
  const options = read.options;
  if (options.mode === 'transparent' && options.policyConfigMap !== undefined) {
    return deny(annotationField(ANNOTATIONS.mode), `${ANNOTATIONS.mode}: transparent contradicts ${ANNOTATIONS.policyConfigMap}: remove one of the two`);
  }
  if (options.mode !== 'transparent' && options.policyConfigMap === undefined) {
    return deny(annotationField(ANNOTATIONS.policyConfigMap),
      `the pod opts in to toolgate but names no policy: set ${ANNOTATIONS.policyConfigMap} to the ConfigMap holding its policy, or set ${ANNOTATIONS.mode}: transparent to forward every request unchecked`);
  }
  const portName = options.portName ?? config.portName;
  if (portName === UPSTREAM_PORT_NAME || portName === ADMIN_PORT_NAME) {
    return deny(annotationField(ANNOTATIONS.portName), `${ANNOTATIONS.portName} names ${portName}, a port name toolgate reserves: name the MCP port something else`);
  }

  const own = shape.containers.filter((c) => OWN_CONTAINERS.has(c.name));
  if (own.length > 0) {
    if (guards(shape.containers, shape.ports, portName)) return skip('toolgate is already injected');
    return deny(containerField(own[0] as ContainerRef),
      `a container is named ${(own[0] as ContainerRef).name} but toolgate is not in front of the port named ${portName}: rename that container`);
  }

  if (config.sidecarMode === 'plain' && (spec.restartPolicy === 'Never' || spec.restartPolicy === 'OnFailure')) {
    return deny('spec.restartPolicy',
      'the pod runs to completion (restartPolicy Never or OnFailure, as Job and CronJob pods do) and a plain toolgate container never exits, so the pod would never complete: use native sidecars (chart value sidecar.mode: native, Kubernetes 1.29 or later)');
  }

  const takeover = choosePort(shape.ports, portName, options);
  if ('kind' in takeover) return takeover;
  const { target, upstreamPort } = takeover;
  const proxyPort = options.proxyPort ?? config.proxyPort;
  const adminPort = options.adminPort ?? config.adminPort;
  if (proxyPort === adminPort) return deny(annotationField(ANNOTATIONS.adminPort), `the proxy and admin ports are both ${proxyPort}: set ${ANNOTATIONS.adminPort} or ${ANNOTATIONS.proxyPort} to another port`);
  for (const [port, annotation] of [[proxyPort, ANNOTATIONS.proxyPort], [adminPort, ANNOTATIONS.adminPort]] as const) {
    const clash = shape.ports.find((p) => p.number === port);
    if (clash !== undefined || port === upstreamPort) {
      return deny(clash === undefined ? annotationField(annotation) : portField(clash), `port ${port} is already used in the pod: choose another with ${annotation}`);
    }
  }

  const volumes = sidecarVolumes(config, options);
  if (spec.volumes !== undefined && !Array.isArray(spec.volumes)) return deny('spec.volumes', 'toolgate cannot read spec.volumes: it must be a list');
  const existingVolumes: unknown[] = Array.isArray(spec.volumes) ? spec.volumes : [];
  const clashIndex = existingVolumes.findIndex((v) => isRecord(v) && volumes.some((own) => own.name === v.name));
  if (clashIndex >= 0) return deny(`spec.volumes[${clashIndex}].name`, 'that volume name is reserved for a volume toolgate mounts: rename the volume');

  const patch: PatchOp[] = [];
  if (target !== undefined) {
    const base = `/spec/containers/${target.container.index}`;
    const op = target.name === undefined ? 'add' : 'replace';
    patch.push({ op, path: `${base}/ports/${target.index}/name`, value: UPSTREAM_PORT_NAME });
    if (target.name !== undefined) patch.push(...renameProbePorts(target.container.spec, base, target.name));
  }
  patch.push(...markOps(metadata));
  const sidecar = sidecarContainer(config, { portName, upstreamPort, proxyPort, adminPort, options });
  const redirect = config.redirect === undefined ? [] : [redirectContainer(config.redirect, upstreamPort, proxyPort)];
  const init = config.sidecarMode === 'native' ? [...redirect, sidecar] : redirect;
  patch.push(...appendOps(spec, 'initContainers', init));
  if (config.sidecarMode === 'plain') patch.push(...appendOps(spec, 'containers', [sidecar]));
  patch.push(...appendOps(spec, 'volumes', volumes));
  return { kind: 'patch', patch, warnings: warnings(spec, options) };
}

type Takeover = { readonly target: PortRef | undefined; readonly upstreamPort: number };

/**
 * The app port toolgate takes over: the one port with the name, or the
 * number in `upstream-port` when no port has the name. A declared port on
 * that number must not keep a name of its own, which a Service could target.
 */
function choosePort(ports: readonly PortRef[], portName: string, options: PodOptions): Takeover | Injection {
  const named = ports.filter((p) => p.name === portName);
  const second = named[1];
  if (second !== undefined) {
    return deny(`${portField(second)}.name`, `more than one container port is named ${portName}: toolgate can stand in front of one, so rename the others`);
  }
  for (const taken of [UPSTREAM_PORT_NAME, ADMIN_PORT_NAME]) {
    const clash = ports.find((p) => p.name === taken);
    if (clash !== undefined) return deny(`${portField(clash)}.name`, `the port name ${taken} is reserved for toolgate: rename that port`);
  }
  const target = named[0];
  if (target !== undefined) {
    const problem = unusable(target, `the port named ${portName}`);
    if (problem !== undefined) return problem;
    if (options.upstreamPort !== undefined && options.upstreamPort !== target.number) {
      return deny(annotationField(ANNOTATIONS.upstreamPort), `${ANNOTATIONS.upstreamPort} disagrees with the port named ${portName}: remove the annotation or make them equal`);
    }
    return { target, upstreamPort: target.number };
  }
  if (options.upstreamPort === undefined) {
    return deny('spec.containers[].ports',
      `no container port is named ${portName}: name the MCP server's container port ${portName}, set ${ANNOTATIONS.portName} to the name it has, or set ${ANNOTATIONS.upstreamPort} to its number`);
  }
  const what = `port ${options.upstreamPort}`;
  const declared = ports.filter((p) => p.number === options.upstreamPort && p.protocol === 'TCP');
  const first = declared[0];
  if (first === undefined) return { target: undefined, upstreamPort: options.upstreamPort };
  if (declared.length > 1) return deny(portField(declared[1] as PortRef), `${what} is declared more than once: declare it once, on the MCP server's container`);
  const problem = unusable(first, what);
  if (problem !== undefined) return problem;
  if (first.name !== undefined) {
    return deny(`${portField(first)}.name`, `${what} already has a name, which a Service could target around toolgate: set ${ANNOTATIONS.portName} to that name instead of ${ANNOTATIONS.upstreamPort}`);
  }
  return { target: first, upstreamPort: options.upstreamPort };
}

/** Why toolgate cannot stand in front of this app port, if it cannot. */
function unusable(port: PortRef, what: string): Injection | undefined {
  const field = portField(port);
  if (port.container.list !== 'containers') return deny(field, `${what} belongs to an init container: declare it on the MCP server's own container`);
  if (port.protocol !== 'TCP') return deny(`${field}.protocol`, `${what} must be TCP: MCP runs over HTTP`);
  if (port.hostPort) return deny(`${field}.hostPort`, `${what} has a hostPort, which reaches the app around toolgate: remove the hostPort`);
  return undefined;
}

/**
 * True when toolgate already stands in front of the port: a long-running
 * container named toolgate holds the port name and no other container does.
 * This makes a second review (reinvocation) a no-op.
 */
function guards(containers: readonly ContainerRef[], ports: readonly PortRef[], portName: string): boolean {
  const named = ports.filter((p) => p.name === portName);
  const holder = named[0]?.container;
  return named.length === 1 && holder !== undefined && holder.name === CONTAINER_NAME && isLongRunning(holder)
    && containers.filter((c) => c.name === CONTAINER_NAME).length === 1;
}

function markOps(metadata: Readonly<Record<string, unknown>>): PatchOp[] {
  const ops: PatchOp[] = [];
  const mark = (map: 'labels' | 'annotations', key: string, value: string) => {
    if (isRecord(metadata[map])) ops.push({ op: 'add', path: `/metadata/${map}/${pointerToken(key)}`, value });
    else ops.push({ op: 'add', path: `/metadata/${map}`, value: { [key]: value } });
  };
  mark('labels', INJECTED_LABEL, 'true');
  mark('annotations', ANNOTATIONS.status, 'injected');
  return ops;
}

function appendOps(spec: Readonly<Record<string, unknown>>, list: 'initContainers' | 'containers' | 'volumes', items: readonly JsonObject[]): PatchOp[] {
  if (items.length === 0) return [];
  if (!Array.isArray(spec[list])) return [{ op: 'add', path: `/spec/${list}`, value: items }];
  return items.map((value) => ({ op: 'add', path: `/spec/${list}/-`, value }));
}

function warnings(spec: Readonly<Record<string, unknown>>, options: PodOptions): string[] {
  const out: string[] = [];
  if (options.mode === 'transparent') out.push(`${ANNOTATIONS.mode} is transparent: toolgate forwards every request without enforcing policy`);
  const grace = typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : DEFAULT_GRACE_SECONDS;
  if (options.drainTimeoutMs !== undefined && options.drainTimeoutMs >= grace * 1000) {
    out.push(`${ANNOTATIONS.drainTimeoutMs} is not below terminationGracePeriodSeconds; drains will be cut short`);
  }
  return out;
}

/** A probe or lifecycle hook that named the taken-over port would stop resolving; it follows the rename. */
function renameProbePorts(container: Readonly<Record<string, unknown>>, base: string, portName: string): PatchOp[] {
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
