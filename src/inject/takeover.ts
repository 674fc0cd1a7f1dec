/**
 * Which app port toolgate takes over, and whether toolgate already stands in
 * front of it. Pure: a port it cannot take over is a refusal naming the field
 * and the fix.
 */
import { ANNOTATIONS } from './annotations.ts';
import type { PodOptions } from './annotations.ts';
import { annotationField, deny } from './decision.ts';
import type { Injection } from './decision.ts';
import { isLongRunning, portField } from './pod.ts';
import type { ContainerRef, PortRef } from './pod.ts';
import { ADMIN_PORT_NAME, CONTAINER_NAME } from './sidecar.ts';

export const UPSTREAM_PORT_NAME = 'mcp-upstream';

export type Takeover = { readonly target: PortRef | undefined; readonly upstreamPort: number };

/**
 * The app port toolgate takes over: the one port with the name, or the
 * number in `upstream-port` when no port has the name. No other port may keep
 * a name that Services and the chart's NetworkPolicy target: the default name
 * when a pod picks another, or a name of its own on the `upstream-port`.
 */
export function choosePort(
  ports: readonly PortRef[],
  portName: string,
  defaultName: string,
  options: PodOptions,
): Takeover | Injection {
  const stale = portName === defaultName ? undefined : ports.find((p) => p.name === defaultName);
  if (stale !== undefined) {
    return deny(
      `${portField(stale)}.name`,
      `this port keeps the name ${defaultName} while toolgate takes over ${portName}, so Services and the NetworkPolicy that target ${defaultName} would reach the app around toolgate: rename the port`,
    );
  }
  const named = ports.filter((p) => p.name === portName);
  const second = named[1];
  if (second !== undefined) {
    return deny(
      `${portField(second)}.name`,
      `more than one container port is named ${portName}: toolgate can stand in front of one, so rename the others`,
    );
  }
  for (const taken of [UPSTREAM_PORT_NAME, ADMIN_PORT_NAME]) {
    const clash = ports.find((p) => p.name === taken);
    if (clash !== undefined)
      return deny(`${portField(clash)}.name`, `the port name ${taken} is reserved for toolgate: rename that port`);
  }
  const target = named[0];
  if (target !== undefined) {
    const problem = unusable(target, `the port named ${portName}`);
    if (problem !== undefined) return problem;
    const again = ports.find((p) => p !== target && p.number === target.number && p.protocol === 'TCP');
    if (again !== undefined) {
      return deny(
        portField(again),
        `port ${target.number} is declared again, and a Service could reach the app through that declaration around toolgate: declare it once`,
      );
    }
    if (options.upstreamPort !== undefined && options.upstreamPort !== target.number) {
      return deny(
        annotationField(ANNOTATIONS.upstreamPort),
        `${ANNOTATIONS.upstreamPort} disagrees with the port named ${portName}: remove the annotation or make them equal`,
      );
    }
    return { target, upstreamPort: target.number };
  }
  if (options.upstreamPort === undefined) {
    return deny(
      'spec.containers[].ports',
      `no container port is named ${portName}: name the MCP server's container port ${portName}, set ${ANNOTATIONS.portName} to the name it has, or set ${ANNOTATIONS.upstreamPort} to its number`,
    );
  }
  const what = `port ${options.upstreamPort}`;
  const declared = ports.filter((p) => p.number === options.upstreamPort && p.protocol === 'TCP');
  const first = declared[0];
  if (first === undefined) return { target: undefined, upstreamPort: options.upstreamPort };
  if (declared.length > 1)
    return deny(
      portField(declared[1] as PortRef),
      `${what} is declared more than once: declare it once, on the MCP server's container`,
    );
  const problem = unusable(first, what);
  if (problem !== undefined) return problem;
  if (first.name !== undefined) {
    return deny(
      `${portField(first)}.name`,
      `${what} already has a name, which a Service could target around toolgate: set ${ANNOTATIONS.portName} to that name instead of ${ANNOTATIONS.upstreamPort}`,
    );
  }
  return { target: first, upstreamPort: options.upstreamPort };
}

/** Why toolgate cannot stand in front of this app port, if it cannot. */
function unusable(port: PortRef, what: string): Injection | undefined {
  const field = portField(port);
  if (port.container.list !== 'containers')
    return deny(field, `${what} belongs to an init container: declare it on the MCP server's own container`);
  if (port.protocol !== 'TCP') return deny(`${field}.protocol`, `${what} must be TCP: MCP runs over HTTP`);
  if (port.hostPort)
    return deny(
      `${field}.hostPort`,
      `${what} has a hostPort, which reaches the app around toolgate: remove the hostPort`,
    );
  return undefined;
}

/**
 * True when toolgate already stands in front of the port: a long-running
 * container named toolgate holds the port name, no other container does, and
 * it forwards over loopback to another port, as the injector's own patch
 * leaves it. This makes a second review (reinvocation) a no-op,
 * while an app container that merely calls itself toolgate is not mistaken
 * for the sidecar.
 */
export function guards(containers: readonly ContainerRef[], ports: readonly PortRef[], portName: string): boolean {
  const named = ports.filter((p) => p.name === portName);
  const holder = named[0]?.container;
  if (named.length !== 1 || holder === undefined || holder.name !== CONTAINER_NAME || !isLongRunning(holder))
    return false;
  if (containers.filter((c) => c.name === CONTAINER_NAME).length !== 1) return false;
  const upstream = loopbackUpstreamPort(holder);
  return upstream !== undefined && upstream !== named[0]?.number;
}

/** The port of the sidecar's TOOLGATE_UPSTREAM, when it is the loopback URL the injector writes. */
function loopbackUpstreamPort(container: ContainerRef): number | undefined {
  const env = Array.isArray(container.spec.env) ? (container.spec.env as unknown[]) : [];
  const entry = env.find(
    (e): e is { name: string; value: string } =>
      typeof e === 'object' &&
      e !== null &&
      (e as { name?: unknown }).name === 'TOOLGATE_UPSTREAM' &&
      typeof (e as { value?: unknown }).value === 'string',
  );
  const m = entry === undefined ? null : /^http:\/\/127\.0\.0\.1:(\d{1,5})$/.exec(entry.value);
  return m === null ? undefined : Number(m[1]);
}
