/**
 * Settings of `toolgate inject-webhook`: each a flag and a TOOLGATE_INJECT_*
 * variable (flags win; an empty variable counts as unset), validated once and
 * frozen. A bad value yields one line naming the setting, never the value.
 */
import { readFlags, settingName, usage, type FlagDef } from '../config/flags.ts';
import type { LogLevel } from '../config/settings.ts';
import { SettingError } from '../errors.ts';
import type { Bind } from '../http/listen-error.ts';

export interface WebhookSettings {
  readonly host: string;
  readonly port: number;
  readonly metricsPort: number;
  readonly certFile: string;
  readonly keyFile: string;
  readonly configFile: string;
  readonly certReloadMs: number;
  readonly logLevel: LogLevel;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

interface Def extends FlagDef {
  readonly key: keyof WebhookSettings;
  readonly parse: (raw: string) => unknown;
}

export const DEFAULT_CONFIG_FILE = '/etc/toolgate-injector/config/config.yaml';

const path = (raw: string) => (raw !== '' && !/[\0\n\r]/.test(raw) ? raw : undefined);
const int = (min: number, max: number) => (raw: string) =>
  /^\d{1,10}$/.test(raw) && Number(raw) >= min && Number(raw) <= max ? Number(raw) : undefined;

const webhookSettingDefs: readonly Def[] = [
  {
    key: 'host',
    flag: '--host',
    env: 'TOOLGATE_INJECT_HOST',
    default: '0.0.0.0',
    doc: 'Address the webhook listens on.',
    parse: (raw) => (raw !== '' && !/\s/.test(raw) ? raw : undefined),
  },
  {
    key: 'port',
    flag: '--port',
    env: 'TOOLGATE_INJECT_PORT',
    default: '8443',
    doc: 'HTTPS port for AdmissionReviews and probes.',
    parse: int(0, 65535),
  },
  {
    key: 'metricsPort',
    flag: '--metrics-port',
    env: 'TOOLGATE_INJECT_METRICS_PORT',
    default: '9090',
    doc: 'Plain-HTTP port for /metrics, /healthz and /readyz (0: off).',
    parse: int(0, 65535),
  },
  {
    key: 'certFile',
    flag: '--tls-cert-file',
    env: 'TOOLGATE_INJECT_TLS_CERT_FILE',
    default: '/etc/toolgate-injector/tls/tls.crt',
    doc: 'PEM certificate chain served to the API server.',
    parse: path,
  },
  {
    key: 'keyFile',
    flag: '--tls-key-file',
    env: 'TOOLGATE_INJECT_TLS_KEY_FILE',
    default: '/etc/toolgate-injector/tls/tls.key',
    doc: 'PEM private key of that certificate.',
    parse: path,
  },
  {
    key: 'configFile',
    flag: '--config',
    env: 'TOOLGATE_INJECT_CONFIG',
    default: DEFAULT_CONFIG_FILE,
    doc: 'Injector configuration (sidecar image, ports, resources, extra env and volumes).',
    parse: path,
  },
  {
    key: 'certReloadMs',
    flag: '--cert-reload-ms',
    env: 'TOOLGATE_INJECT_CERT_RELOAD_MS',
    default: '60000',
    doc: 'How often the certificate and key are re-read (0: never).',
    parse: int(0, 86_400_000),
  },
  {
    key: 'logLevel',
    flag: '--log-level',
    env: 'TOOLGATE_INJECT_LOG_LEVEL',
    default: 'info',
    doc: 'debug, info, warn or error.',
    parse: (raw) => (['debug', 'info', 'warn', 'error'].includes(raw) ? raw : undefined),
  },
];

const PROBLEMS: Readonly<Record<keyof WebhookSettings, string>> = {
  host: 'expected an address',
  port: 'expected a whole number from 0 to 65535',
  metricsPort: 'expected a whole number from 0 to 65535',
  certFile: 'expected a file path',
  keyFile: 'expected a file path',
  configFile: 'expected a file path',
  certReloadMs: 'expected a whole number from 0 to 86400000',
  logLevel: 'expected debug, info, warn or error',
};

/** Where one of the webhook's listeners binds, with the settings a failed bind names. */
export function webhookBind(s: WebhookSettings, key: 'port' | 'metricsPort'): Bind {
  const name = (k: keyof WebhookSettings) => settingName(webhookSettingDefs.find((d) => d.key === k) as Def);
  return { host: s.host, port: s[key], hostSetting: name('host'), portSetting: name(key) };
}

/** `toolgate inject-webhook --help`. */
export const WEBHOOK_USAGE = usage(
  'usage: toolgate inject-webhook [flags]   the sidecar injector (mutating admission webhook)',
  webhookSettingDefs,
);

export function loadWebhookSettings(argv: readonly string[], env: NodeJS.ProcessEnv): Parsed<WebhookSettings> {
  let flags: ReadonlyMap<string, string>;
  try {
    const read = readFlags(argv, webhookSettingDefs);
    if (read.kind !== 'values') return { ok: false, reason: `invalid setting --${read.kind}: not a setting` };
    flags = read.values;
  } catch (err) {
    if (err instanceof SettingError) return { ok: false, reason: err.message };
    throw err;
  }
  const out: Record<string, unknown> = {};
  for (const d of webhookSettingDefs) {
    const fromFlag = flags.get(d.flag);
    const fromEnv = env[d.env];
    const [raw, source] =
      fromFlag !== undefined
        ? [fromFlag, d.flag]
        : fromEnv !== undefined && fromEnv !== ''
          ? [fromEnv, d.env]
          : [d.default, d.env];
    const value = d.parse(raw);
    if (value === undefined) return { ok: false, reason: `invalid setting ${source}: ${PROBLEMS[d.key]}` };
    out[d.key] = value;
  }
  return { ok: true, value: Object.freeze(out) as unknown as WebhookSettings };
}
