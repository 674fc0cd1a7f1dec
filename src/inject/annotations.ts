/**
 * The pod's opt-in and its `toolgate.dev/*` annotations, read into injection
 * options. Pure: a value it cannot accept becomes a problem naming the
 * annotation and what it must be (never echoing the value), and the injector
 * refuses the pod rather than run it without toolgate.
 */
import { parsePrefixes } from '../mcp/target.ts';
import { isPortName, isQuantity, stringMap } from './k8s.ts';

const PREFIX = 'toolgate.dev/';
export const ANNOTATIONS = Object.freeze({
  inject: `${PREFIX}inject`,
  status: `${PREFIX}status`,
  portName: `${PREFIX}port-name`,
  upstreamPort: `${PREFIX}upstream-port`,
  proxyPort: `${PREFIX}proxy-port`,
  adminPort: `${PREFIX}admin-port`,
  mode: `${PREFIX}mode`,
  policyConfigMap: `${PREFIX}policy-configmap`,
  policyKey: `${PREFIX}policy-key`,
  keysSecret: `${PREFIX}keys-secret`,
  mcpPath: `${PREFIX}mcp-path`,
  passthroughPaths: `${PREFIX}passthrough-paths`,
  logLevel: `${PREFIX}log-level`,
  drainTimeoutMs: `${PREFIX}drain-timeout-ms`,
  cpuRequest: `${PREFIX}cpu-request`,
  memoryRequest: `${PREFIX}memory-request`,
  cpuLimit: `${PREFIX}cpu-limit`,
  memoryLimit: `${PREFIX}memory-limit`,
});

export type OptIn = 'in' | 'out' | 'absent' | 'invalid' | 'conflict';

/**
 * The label is what the webhook's objectSelector matches; the annotation is
 * honoured too for clusters that run without that selector. A label and an
 * annotation that disagree are a conflict, not an opt-out: a pod labelled for
 * injection is never admitted without toolgate on the word of an annotation.
 */
export function optIn(labels: unknown, annotations: unknown): OptIn {
  const values = [stringMap(labels).get(ANNOTATIONS.inject), stringMap(annotations).get(ANNOTATIONS.inject)];
  if (values.some((v) => v !== undefined && v !== 'true' && v !== 'false')) return 'invalid';
  if (values.includes('true') && values.includes('false')) return 'conflict';
  if (values.includes('true')) return 'in';
  return values.includes('false') ? 'out' : 'absent';
}

/** `policy` needs a policy ConfigMap; `transparent` forwards everything and must be asked for by name. */
type Mode = 'policy' | 'transparent';

export interface PodOptions {
  readonly mode: Mode | undefined;
  readonly portName: string | undefined;
  readonly upstreamPort: number | undefined;
  readonly proxyPort: number | undefined;
  readonly adminPort: number | undefined;
  readonly policyConfigMap: string | undefined;
  readonly policyKey: string;
  readonly keysSecret: string | undefined;
  readonly mcpPath: string | undefined;
  readonly passthroughPaths: string | undefined;
  readonly logLevel: string | undefined;
  readonly drainTimeoutMs: number | undefined;
  readonly requests: Readonly<Record<string, string>>;
  readonly limits: Readonly<Record<string, string>>;
}

/** An annotation the injector cannot accept, and what it has to be. */
interface AnnotationProblem {
  readonly annotation: string;
  readonly expected: string;
}

export type OptionsResult = { ok: true; options: PodOptions } | ({ ok: false } & AnnotationProblem);

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const CONFIGMAP_KEY = /^[-._a-zA-Z0-9]{1,253}$/;

function bad(annotation: string, expected: string): OptionsResult {
  return { ok: false, annotation, expected };
}

function portNumber(text: string): number | undefined {
  return /^[0-9]{1,5}$/.test(text) && Number(text) >= 1 && Number(text) <= 65535 ? Number(text) : undefined;
}

export function readOptions(annotations: unknown): OptionsResult {
  const a = stringMap(annotations);
  const get = (key: string): string | undefined => a.get(key);

  const mode = get(ANNOTATIONS.mode);
  if (mode !== undefined && mode !== 'policy' && mode !== 'transparent')
    return bad(ANNOTATIONS.mode, 'policy or transparent');

  const portName = get(ANNOTATIONS.portName);
  if (portName !== undefined && !isPortName(portName)) return bad(ANNOTATIONS.portName, 'a Kubernetes port name');

  const ports: Record<'upstreamPort' | 'proxyPort' | 'adminPort', number | undefined> = {
    upstreamPort: undefined,
    proxyPort: undefined,
    adminPort: undefined,
  };
  for (const key of ['upstreamPort', 'proxyPort', 'adminPort'] as const) {
    const text = get(ANNOTATIONS[key]);
    if (text === undefined) continue;
    const n = portNumber(text);
    if (n === undefined) return bad(ANNOTATIONS[key], 'a port number from 1 to 65535');
    ports[key] = n;
  }

  const policyConfigMap = get(ANNOTATIONS.policyConfigMap);
  if (policyConfigMap !== undefined && !DNS_SUBDOMAIN.test(policyConfigMap))
    return bad(ANNOTATIONS.policyConfigMap, 'a ConfigMap name');
  const policyKey = get(ANNOTATIONS.policyKey) ?? 'policy.yaml';
  if (!CONFIGMAP_KEY.test(policyKey) || policyKey === '.' || policyKey === '..')
    return bad(ANNOTATIONS.policyKey, 'a ConfigMap key');
  const keysSecret = get(ANNOTATIONS.keysSecret);
  if (keysSecret !== undefined && !DNS_SUBDOMAIN.test(keysSecret)) return bad(ANNOTATIONS.keysSecret, 'a Secret name');

  const mcpPath = get(ANNOTATIONS.mcpPath);
  if (mcpPath !== undefined && !/^\/[A-Za-z0-9._~!$&'()*+,;=:@/-]{0,1023}$/.test(mcpPath))
    return bad(ANNOTATIONS.mcpPath, 'an absolute URL path');
  const passthroughPaths = get(ANNOTATIONS.passthroughPaths);
  if (passthroughPaths !== undefined && parsePrefixes(passthroughPaths) === undefined)
    return bad(ANNOTATIONS.passthroughPaths, 'comma-separated plain absolute URL paths');
  const logLevel = get(ANNOTATIONS.logLevel);
  if (logLevel !== undefined && !['debug', 'info', 'warn', 'error'].includes(logLevel))
    return bad(ANNOTATIONS.logLevel, 'debug, info, warn or error');
  const drainText = get(ANNOTATIONS.drainTimeoutMs);
  const drainTimeoutMs =
    drainText === undefined
      ? undefined
      : /^[0-9]{1,7}$/.test(drainText) && Number(drainText) <= 3_600_000
        ? Number(drainText)
        : NaN;
  if (Number.isNaN(drainTimeoutMs))
    return bad(ANNOTATIONS.drainTimeoutMs, 'a whole number of milliseconds up to 3600000');

  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  const quantities = [
    [ANNOTATIONS.cpuRequest, requests, 'cpu'],
    [ANNOTATIONS.memoryRequest, requests, 'memory'],
    [ANNOTATIONS.cpuLimit, limits, 'cpu'],
    [ANNOTATIONS.memoryLimit, limits, 'memory'],
  ] as const;
  for (const [annotation, target, resource] of quantities) {
    const text = get(annotation);
    if (text === undefined) continue;
    if (!isQuantity(text)) return bad(annotation, 'a resource quantity such as 100m or 128Mi');
    target[resource] = text;
  }

  return {
    ok: true,
    options: {
      mode,
      portName,
      ...ports,
      policyConfigMap,
      policyKey,
      keysSecret,
      mcpPath,
      passthroughPaths,
      logLevel,
      drainTimeoutMs,
      requests,
      limits,
    },
  };
}
