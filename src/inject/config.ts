/**
 * The injector's configuration file (rendered by the Helm chart into a
 * ConfigMap): which image the sidecar runs, its default ports, resources, and
 * extra environment/volumes (the chart plumbs Redis settings through these).
 * Validated once with every object closed, then deep-frozen.
 */
import { readFile } from 'node:fs/promises';
import { compileSchema, parseYaml, validateWith } from '../config/policy/validate.ts';
import type { ConfigError } from '../config/policy/validate.ts';
import type { JsonObject } from './k8s.ts';
import { isPortName } from './k8s.ts';

type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';

/**
 * `native`: toolgate is an init container with `restartPolicy: Always`
 * (Kubernetes 1.29+), started before the app and stopped after it, and not
 * counted for Job completion. `plain`: an ordinary container, for older
 * clusters; pods that run to completion are refused in this mode.
 */
type SidecarMode = 'native' | 'plain';

/** The optional init container that sends the app port's outside traffic to toolgate. */
export interface RedirectConfig {
  readonly image: string;
  readonly imagePullPolicy: PullPolicy;
}

export interface InjectorConfig {
  readonly image: string;
  readonly imagePullPolicy: PullPolicy;
  readonly sidecarMode: SidecarMode;
  readonly redirect: RedirectConfig | undefined;
  /** Traffic port toolgate listens on inside the pod, unless a pod annotation says otherwise. */
  readonly proxyPort: number;
  readonly adminPort: number;
  /** Name of the pod's MCP port that toolgate takes over, unless a pod annotation says otherwise. */
  readonly portName: string;
  readonly resources: JsonObject;
  /** Added to the sidecar's env after the variables the injector sets itself. */
  readonly env: readonly JsonObject[];
  readonly volumes: readonly JsonObject[];
  readonly volumeMounts: readonly JsonObject[];
}

/** Variables the injector derives from the pod; the config may not set them. */
const MANAGED_ENV: ReadonlySet<string> = new Set([
  'TOOLGATE_UPSTREAM',
  'TOOLGATE_PORT',
  'TOOLGATE_ADMIN_PORT',
  'TOOLGATE_POLICY_FILE',
  'TOOLGATE_MCP_PATH',
  'TOOLGATE_PASSTHROUGH_PATHS',
  'TOOLGATE_LOG_LEVEL',
  'TOOLGATE_DRAIN_TIMEOUT_MS',
]);

const MAX_CONFIG_BYTES = 1 << 20;

const quantity = { type: 'string', pattern: '^[0-9]{1,12}(\\.[0-9]{1,9})?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$' };
const resourceList = {
  type: 'object',
  additionalProperties: false,
  properties: { cpu: quantity, memory: quantity, 'ephemeral-storage': quantity },
};
const port = { type: 'integer', minimum: 1, maximum: 65535 };
const named = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 253 } },
};

const image = { type: 'string', minLength: 1, maxLength: 512, pattern: '^\\S+$' };
const pullPolicy = { enum: ['Always', 'IfNotPresent', 'Never'] };

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['image'],
  properties: {
    image,
    imagePullPolicy: pullPolicy,
    sidecarMode: { enum: ['native', 'plain'] },
    redirect: {
      type: 'object',
      additionalProperties: false,
      required: ['image'],
      properties: { image, imagePullPolicy: pullPolicy },
    },
    proxyPort: port,
    adminPort: port,
    portName: { type: 'string', minLength: 1, maxLength: 15 },
    resources: {
      type: 'object',
      additionalProperties: false,
      properties: { requests: resourceList, limits: resourceList },
    },
    env: {
      type: 'array',
      maxItems: 100,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: {
          name: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_.-]*$', maxLength: 256 },
          value: { type: 'string' },
          valueFrom: { type: 'object' },
        },
      },
    },
    volumes: { type: 'array', maxItems: 20, items: named },
    volumeMounts: {
      type: 'array',
      maxItems: 20,
      items: {
        ...named,
        required: ['name', 'mountPath'],
        properties: { ...named.properties, mountPath: { type: 'string', minLength: 1 } },
      },
    },
  },
};

const validate = compileSchema(schema);

export type ConfigResult = { ok: true; config: InjectorConfig } | { ok: false; errors: ConfigError[] };

export function parseInjectorConfig(text: string): ConfigResult {
  const parsed = parseYaml(text, MAX_CONFIG_BYTES);
  if (!parsed.ok) return { ok: false, errors: parsed.errors };
  type Raw = Partial<Omit<InjectorConfig, 'redirect'>> & {
    image: string;
    redirect?: { image: string; imagePullPolicy?: PullPolicy };
  };
  const checked = validateWith<Raw>(validate, parsed.value ?? {});
  if (!checked.ok) return { ok: false, errors: checked.errors };
  const raw = checked.value;
  const config: InjectorConfig = {
    image: raw.image,
    imagePullPolicy: raw.imagePullPolicy ?? 'IfNotPresent',
    sidecarMode: raw.sidecarMode ?? 'native',
    redirect:
      raw.redirect === undefined
        ? undefined
        : { image: raw.redirect.image, imagePullPolicy: raw.redirect.imagePullPolicy ?? 'IfNotPresent' },
    proxyPort: raw.proxyPort ?? 8080,
    adminPort: raw.adminPort ?? 9090,
    portName: raw.portName ?? 'mcp',
    resources: raw.resources ?? {},
    env: raw.env ?? [],
    volumes: raw.volumes ?? [],
    volumeMounts: raw.volumeMounts ?? [],
  };
  const errors: ConfigError[] = [];
  if (!isPortName(config.portName))
    errors.push({ path: '/portName', message: 'must be a Kubernetes port name (IANA_SVC_NAME)' });
  if (config.proxyPort === config.adminPort) errors.push({ path: '/adminPort', message: 'must differ from proxyPort' });
  config.env.forEach((e, i) => {
    if (typeof e.name === 'string' && MANAGED_ENV.has(e.name))
      errors.push({ path: `/env/${i}/name`, message: 'is set by the injector from pod annotations' });
  });
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, config: deepFreeze(config) };
}

export async function loadInjectorConfig(path: string): Promise<ConfigResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    return {
      ok: false,
      errors: [{ path: '', message: `cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})` }],
    };
  }
  return parseInjectorConfig(text);
}

/** One line per problem, each naming the file, as both commands print them. */
export function configProblems(file: string, errors: readonly ConfigError[]): string[] {
  return errors.map((e) => `injector config ${file}: ${e.path === '' ? '' : `${e.path}: `}${e.message}`);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
