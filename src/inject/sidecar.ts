/**
 * The toolgate container as the injector adds it: upstream on loopback (a
 * pod's containers share one network namespace), the taken-over MCP port,
 * probes on the admin port, and a securityContext that needs no privilege.
 * As a native sidecar it also restarts on its own (`restartPolicy: Always`)
 * and has a startup probe, which the kubelet waits for before it starts the
 * app's containers.
 */
import type { PodOptions } from './annotations.ts';
import type { InjectorConfig } from './config.ts';
import type { Json, JsonObject } from './k8s.ts';
import { isRecord } from '../json/record.ts';

export const CONTAINER_NAME = 'toolgate';
export const ADMIN_PORT_NAME = 'toolgate-admin';
const POLICY_VOLUME = 'toolgate-policy';
const KEYS_VOLUME = 'toolgate-keys';
const STATE_VOLUME = 'toolgate-state';
const POLICY_DIR = '/etc/toolgate/policy';
const KEYS_DIR = '/etc/toolgate/keys';
/**
 * An emptyDir outlives restarts of the container (a crash, an OOM kill), so
 * the idempotency records a policy sidecar keeps there survive them where no
 * Redis is configured (with Redis, Redis keeps them and the file is unused).
 * No size limit: past one the kubelet evicts the pod; a full disk makes
 * keyed calls fail closed instead.
 */
const STATE_DIR = '/var/lib/toolgate';

/** Applied to the sidecar whatever the config says: hardening is not optional. */
export const SECURITY_CONTEXT: JsonObject = Object.freeze({
  runAsNonRoot: true,
  readOnlyRootFilesystem: true,
  allowPrivilegeEscalation: false,
  privileged: false,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
});

export interface SidecarPlan {
  readonly portName: string;
  readonly upstreamPort: number;
  readonly proxyPort: number;
  readonly adminPort: number;
  readonly options: PodOptions;
}

export function sidecarContainer(config: InjectorConfig, plan: SidecarPlan): JsonObject {
  const { options } = plan;
  const env: JsonObject[] = [
    { name: 'TOOLGATE_UPSTREAM', value: `http://127.0.0.1:${plan.upstreamPort}` },
    { name: 'TOOLGATE_PORT', value: String(plan.proxyPort) },
    { name: 'TOOLGATE_ADMIN_PORT', value: String(plan.adminPort) },
  ];
  if (options.policyConfigMap !== undefined)
    env.push({ name: 'TOOLGATE_POLICY_FILE', value: `${POLICY_DIR}/${options.policyKey}` });
  if (options.mcpPath !== undefined) env.push({ name: 'TOOLGATE_MCP_PATH', value: options.mcpPath });
  if (options.passthroughPaths !== undefined)
    env.push({ name: 'TOOLGATE_PASSTHROUGH_PATHS', value: options.passthroughPaths });
  if (options.logLevel !== undefined) env.push({ name: 'TOOLGATE_LOG_LEVEL', value: options.logLevel });
  if (options.drainTimeoutMs !== undefined)
    env.push({ name: 'TOOLGATE_DRAIN_TIMEOUT_MS', value: String(options.drainTimeoutMs) });
  if (options.policyConfigMap !== undefined)
    env.push({ name: 'TOOLGATE_IDEMPOTENCY_FILE', value: `${STATE_DIR}/idempotency.journal` });
  env.push(...config.env);

  const mounts: JsonObject[] = [];
  if (options.policyConfigMap !== undefined)
    mounts.push({ name: POLICY_VOLUME, mountPath: POLICY_DIR, readOnly: true });
  if (options.keysSecret !== undefined) mounts.push({ name: KEYS_VOLUME, mountPath: KEYS_DIR, readOnly: true });
  if (options.policyConfigMap !== undefined) mounts.push({ name: STATE_VOLUME, mountPath: STATE_DIR });
  mounts.push(...config.volumeMounts);

  const container: Record<string, Json> = {
    name: CONTAINER_NAME,
    image: config.image,
    imagePullPolicy: config.imagePullPolicy,
    ...(config.sidecarMode === 'native' ? { restartPolicy: 'Always' } : {}),
    ports: [
      { name: plan.portName, containerPort: plan.proxyPort, protocol: 'TCP' },
      { name: ADMIN_PORT_NAME, containerPort: plan.adminPort, protocol: 'TCP' },
    ],
    env,
    resources: resources(config.resources, options),
    // /healthz, not /readyz: toolgate is ready only once the app answers, and the app starts after this probe passes.
    ...(config.sidecarMode === 'native' ? { startupProbe: probe('/healthz', 1, STARTUP_ATTEMPTS) } : {}),
    livenessProbe: probe('/healthz', 10),
    readinessProbe: probe('/readyz', 5),
    securityContext: SECURITY_CONTEXT,
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
  if (mounts.length > 0) container.volumeMounts = mounts;
  return container;
}

export function sidecarVolumes(config: InjectorConfig, options: PodOptions): JsonObject[] {
  const volumes: JsonObject[] = [];
  if (options.policyConfigMap !== undefined)
    volumes.push({ name: POLICY_VOLUME, configMap: { name: options.policyConfigMap } });
  if (options.keysSecret !== undefined) volumes.push({ name: KEYS_VOLUME, secret: { secretName: options.keysSecret } });
  if (options.policyConfigMap !== undefined) volumes.push({ name: STATE_VOLUME, emptyDir: {} });
  volumes.push(...config.volumes);
  return volumes;
}

/** Two minutes for the image to start listening before the kubelet restarts it. */
const STARTUP_ATTEMPTS = 120;

function probe(path: string, periodSeconds: number, failureThreshold = 3): JsonObject {
  return {
    httpGet: { path, port: ADMIN_PORT_NAME, scheme: 'HTTP' },
    periodSeconds,
    timeoutSeconds: 2,
    failureThreshold,
  };
}

/** Annotation values replace the config's, resource by resource. */
function resources(base: JsonObject, options: PodOptions): JsonObject {
  const pick = (key: 'requests' | 'limits', overrides: Readonly<Record<string, string>>): JsonObject | undefined => {
    const from = base[key];
    const merged: JsonObject = { ...(isRecord(from) ? from : {}), ...overrides };
    return Object.keys(merged).length > 0 ? merged : undefined;
  };
  const out: Record<string, Json> = {};
  const requests = pick('requests', options.requests);
  const limits = pick('limits', options.limits);
  if (requests !== undefined) out.requests = requests;
  if (limits !== undefined) out.limits = limits;
  return out;
}
