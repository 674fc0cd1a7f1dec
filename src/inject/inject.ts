/**
 * Decides what happens to a pod at creation and assembles the JSONPatch that
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
import { stringMap } from './k8s.ts';
import type { PatchOp } from './k8s.ts';
import { appendOps, markOps, renameOps } from './patch.ts';
import { containerField, portField, readPodShape } from './pod.ts';
import type { ContainerRef } from './pod.ts';
import { REDIRECT_CONTAINER_NAME, redirectContainer } from './redirect.ts';
import { ADMIN_PORT_NAME, CONTAINER_NAME, sidecarContainer, sidecarVolumes } from './sidecar.ts';
import { choosePort, guards, UPSTREAM_PORT_NAME } from './takeover.ts';
import { annotationField, deny, skip } from './decision.ts';
import type { Injection } from './decision.ts';

export type { Injection } from './decision.ts';

const DEFAULT_GRACE_SECONDS = 30;
const OWN_CONTAINERS: ReadonlySet<string> = new Set([CONTAINER_NAME, REDIRECT_CONTAINER_NAME]);

export function planInjection(pod: unknown, config: InjectorConfig): Injection {
  if (!isRecord(pod)) return skip('the object is not a pod');
  const metadata = isRecord(pod.metadata) ? pod.metadata : {};
  const opt = optIn(metadata.labels, metadata.annotations);
  if (opt === 'absent') return skip('the pod did not opt in');
  if (opt === 'out') return skip('the pod opted out');
  if (opt === 'conflict') {
    return deny(
      `metadata.annotations[${ANNOTATIONS.inject}]`,
      `the label and the annotation ${ANNOTATIONS.inject} disagree: to opt out, set the label to "false" or remove it; to opt in, remove the annotation`,
    );
  }
  if (opt === 'invalid') {
    const where = ['true', 'false', undefined].includes(stringMap(metadata.labels).get(ANNOTATIONS.inject))
      ? 'annotations'
      : 'labels';
    return deny(`metadata.${where}[${ANNOTATIONS.inject}]`, `${ANNOTATIONS.inject} must be "true" or "false"`);
  }

  const spec = pod.spec;
  if (!isRecord(spec)) return deny('spec', 'the pod has no spec toolgate can read');
  if (spec.hostNetwork === true) {
    return deny(
      'spec.hostNetwork',
      `the sidecar cannot be injected into a pod on the host network (it would bind node ports): run the pod without hostNetwork or remove ${ANNOTATIONS.inject}`,
    );
  }
  const shape = readPodShape(spec);
  if (!shape.ok)
    return deny(
      shape.field,
      `cannot read ${shape.field}: every container needs a name and every port a containerPort from 1 to 65535`,
    );

  const read = readOptions(metadata.annotations);
  if (!read.ok)
    return deny(
      annotationField(read.annotation),
      `annotation ${read.annotation} must be ${read.expected}: correct it or remove it`,
    );
  const options = read.options;
  if (options.mode === 'transparent' && options.policyConfigMap !== undefined) {
    return deny(
      annotationField(ANNOTATIONS.mode),
      `${ANNOTATIONS.mode}: transparent contradicts ${ANNOTATIONS.policyConfigMap}: remove one of the two`,
    );
  }
  if (options.mode !== 'transparent' && options.policyConfigMap === undefined) {
    return deny(
      annotationField(ANNOTATIONS.policyConfigMap),
      `the pod opts in to toolgate but names no policy: set ${ANNOTATIONS.policyConfigMap} to the ConfigMap holding its policy, or set ${ANNOTATIONS.mode}: transparent to forward every request unchecked`,
    );
  }
  const portName = options.portName ?? config.portName;
  if (portName === UPSTREAM_PORT_NAME || portName === ADMIN_PORT_NAME) {
    return deny(
      annotationField(ANNOTATIONS.portName),
      `${ANNOTATIONS.portName} names ${portName}, a port name toolgate reserves: name the MCP port something else`,
    );
  }

  const own = shape.containers.filter((c) => OWN_CONTAINERS.has(c.name));
  if (own.length > 0) {
    if (guards(shape.containers, shape.ports, portName)) return skip('toolgate is already injected');
    return deny(
      containerField(own[0] as ContainerRef),
      `a container is named ${(own[0] as ContainerRef).name} but toolgate is not in front of the port named ${portName}: rename that container`,
    );
  }

  if (config.sidecarMode === 'plain' && (spec.restartPolicy === 'Never' || spec.restartPolicy === 'OnFailure')) {
    return deny(
      'spec.restartPolicy',
      'the pod runs to completion (restartPolicy Never or OnFailure, as Job and CronJob pods do) and a plain toolgate container never exits, so the pod would never complete: use native sidecars (chart value sidecar.mode: native, Kubernetes 1.29 or later)',
    );
  }

  const takeover = choosePort(shape.ports, portName, config.portName, options);
  if ('kind' in takeover) return takeover;
  const { target, upstreamPort } = takeover;
  const proxyPort = options.proxyPort ?? config.proxyPort;
  const adminPort = options.adminPort ?? config.adminPort;
  if (proxyPort === adminPort)
    return deny(
      annotationField(ANNOTATIONS.adminPort),
      `the proxy and admin ports are both ${proxyPort}: set ${ANNOTATIONS.adminPort} or ${ANNOTATIONS.proxyPort} to another port`,
    );
  for (const [port, annotation] of [
    [proxyPort, ANNOTATIONS.proxyPort],
    [adminPort, ANNOTATIONS.adminPort],
  ] as const) {
    const clash = shape.ports.find((p) => p.number === port);
    if (clash !== undefined || port === upstreamPort) {
      return deny(
        clash === undefined ? annotationField(annotation) : portField(clash),
        `port ${port} is already used in the pod: choose another with ${annotation}`,
      );
    }
  }

  const volumes = sidecarVolumes(config, options);
  if (spec.volumes !== undefined && !Array.isArray(spec.volumes))
    return deny('spec.volumes', 'cannot read spec.volumes: it must be a list');
  const existingVolumes: unknown[] = Array.isArray(spec.volumes) ? spec.volumes : [];
  const clashIndex = existingVolumes.findIndex((v) => isRecord(v) && volumes.some((ours) => ours.name === v.name));
  if (clashIndex >= 0)
    return deny(
      `spec.volumes[${clashIndex}].name`,
      'that volume name is reserved for a volume toolgate mounts: rename the volume',
    );

  const patch: PatchOp[] = [...renameOps(target), ...markOps(metadata)];
  const sidecar = sidecarContainer(config, { portName, upstreamPort, proxyPort, adminPort, options });
  const redirect = config.redirect === undefined ? [] : [redirectContainer(config.redirect, upstreamPort, proxyPort)];
  const init = config.sidecarMode === 'native' ? [...redirect, sidecar] : redirect;
  patch.push(...appendOps(spec, 'initContainers', init));
  if (config.sidecarMode === 'plain') patch.push(...appendOps(spec, 'containers', [sidecar]));
  patch.push(...appendOps(spec, 'volumes', volumes));
  return { kind: 'patch', patch, warnings: warnings(spec, options) };
}

function warnings(spec: Readonly<Record<string, unknown>>, options: PodOptions): string[] {
  const out: string[] = [];
  if (options.mode === 'transparent')
    out.push(`${ANNOTATIONS.mode} is transparent: toolgate forwards every request without enforcing policy`);
  const grace =
    typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : DEFAULT_GRACE_SECONDS;
  if (options.drainTimeoutMs !== undefined && options.drainTimeoutMs >= grace * 1000) {
    out.push(`${ANNOTATIONS.drainTimeoutMs} is not below terminationGracePeriodSeconds; drains will be cut short`);
  }
  return out;
}
