/**
 * Redis connections: one validated, frozen configuration from a URL (plus an
 * optional secret file), and a client factory that fails fast. Commands never
 * queue while disconnected and every command has a deadline, so a Redis
 * outage turns into prompt `grants_unavailable` answers rather than hung
 * requests. Problems name the setting, never the URL or a password.
 */
import { readFileSync } from 'node:fs';
import { Cluster, Redis } from 'ioredis';
import type { ClusterOptions, RedisOptions } from 'ioredis';

export type RedisClient = Redis | Cluster;
type RedisMode = 'standalone' | 'sentinel' | 'cluster';

interface RedisNode {
  readonly host: string;
  readonly port: number;
}

export interface RedisConfig {
  readonly mode: RedisMode;
  readonly nodes: readonly RedisNode[];
  readonly tls: boolean;
  /** PEM text of extra CA certificates for TLS, when configured. */
  readonly tlsCa: string | undefined;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly db: number;
  /** Sentinel mode: the monitored master's name. */
  readonly masterName: string | undefined;
  readonly connectTimeoutMs: number;
  readonly commandTimeoutMs: number;
}

export interface RedisSettingsInput {
  /** `TOOLGATE_REDIS_URL`: redis://, rediss://, redis+sentinel://, rediss+sentinel://, redis+cluster://, rediss+cluster://. */
  readonly url: string;
  /** `TOOLGATE_REDIS_USERNAME`: ACL user; overrides one in the URL. */
  readonly username?: string | undefined;
  /** `TOOLGATE_REDIS_PASSWORD_FILE`: a mounted Secret holding the password; overrides one in the URL. */
  readonly passwordFile?: string | undefined;
  /** `TOOLGATE_REDIS_TLS_CA_FILE`: PEM bundle to trust for rediss://. */
  readonly tlsCaFile?: string | undefined;
  readonly connectTimeoutMs?: number | undefined;
  readonly commandTimeoutMs?: number | undefined;
}

export type RedisConfigResult = { ok: true; config: RedisConfig } | { ok: false; setting: string; problem: string };

export const REDIS_SETTINGS = Object.freeze({
  url: 'TOOLGATE_REDIS_URL',
  username: 'TOOLGATE_REDIS_USERNAME',
  passwordFile: 'TOOLGATE_REDIS_PASSWORD_FILE',
  tlsCaFile: 'TOOLGATE_REDIS_TLS_CA_FILE',
  connectTimeoutMs: 'TOOLGATE_REDIS_CONNECT_TIMEOUT_MS',
  commandTimeoutMs: 'TOOLGATE_REDIS_COMMAND_TIMEOUT_MS',
});

const DEFAULT_CONNECT_TIMEOUT_MS = 2000;
const DEFAULT_COMMAND_TIMEOUT_MS = 500;
/** Longest pause between reconnect attempts, so recovery follows Redis within about a second. */
const MAX_RECONNECT_DELAY_MS = 1000;

const SCHEMES: Readonly<Record<string, { mode: RedisMode; tls: boolean }>> = {
  'redis:': { mode: 'standalone', tls: false },
  'rediss:': { mode: 'standalone', tls: true },
  'redis+sentinel:': { mode: 'sentinel', tls: false },
  'rediss+sentinel:': { mode: 'sentinel', tls: true },
  'redis+cluster:': { mode: 'cluster', tls: false },
  'rediss+cluster:': { mode: 'cluster', tls: true },
};

const DEFAULT_PORT: Readonly<Record<RedisMode, number>> = { standalone: 6379, sentinel: 26379, cluster: 6379 };
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$|^\d{1,3}(?:\.\d{1,3}){3}$/;
const IPV6 = /^[0-9A-Fa-f:.]{2,45}$/;
const MASTER_NAME = /^[A-Za-z0-9._-]{1,128}$/;
const MAX_NODES = 64;

type Read = (path: string) => string;

const defaultRead: Read = (path) => readFileSync(path, 'utf8');

/**
 * Validates the Redis settings once. Secret and CA files are read here, so a
 * missing mount fails start-up rather than the first request.
 */
export function parseRedisConfig(input: RedisSettingsInput, read: Read = defaultRead): RedisConfigResult {
  const url = parseUrl(input.url);
  if (!url.ok) return { ok: false, setting: REDIS_SETTINGS.url, problem: url.problem };
  const connectTimeoutMs = input.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const commandTimeoutMs = input.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  if (!isTimeout(connectTimeoutMs))
    return {
      ok: false,
      setting: REDIS_SETTINGS.connectTimeoutMs,
      problem: 'expected a whole number of milliseconds from 1 to 600000',
    };
  if (!isTimeout(commandTimeoutMs))
    return {
      ok: false,
      setting: REDIS_SETTINGS.commandTimeoutMs,
      problem: 'expected a whole number of milliseconds from 1 to 600000',
    };

  let username = url.username;
  if (input.username !== undefined && input.username !== '') {
    if (!isCredential(input.username))
      return { ok: false, setting: REDIS_SETTINGS.username, problem: 'expected 1-256 printable characters' };
    username = input.username;
  }
  let password = url.password;
  if (input.passwordFile !== undefined && input.passwordFile !== '') {
    const text = readSafely(read, input.passwordFile);
    if (text === undefined) return { ok: false, setting: REDIS_SETTINGS.passwordFile, problem: 'cannot read the file' };
    const secret = text.replace(/\r?\n$/, '');
    if (!isCredential(secret))
      return {
        ok: false,
        setting: REDIS_SETTINGS.passwordFile,
        problem: 'expected one line of 1-256 printable characters',
      };
    password = secret;
  }
  let tlsCa: string | undefined;
  if (input.tlsCaFile !== undefined && input.tlsCaFile !== '') {
    if (!url.tls) return { ok: false, setting: REDIS_SETTINGS.tlsCaFile, problem: 'only valid with a rediss:// URL' };
    tlsCa = readSafely(read, input.tlsCaFile);
    if (tlsCa === undefined || !tlsCa.includes('-----BEGIN CERTIFICATE-----'))
      return { ok: false, setting: REDIS_SETTINGS.tlsCaFile, problem: 'expected a readable PEM certificate file' };
  }
  return {
    ok: true,
    config: Object.freeze({
      mode: url.mode,
      nodes: url.nodes,
      tls: url.tls,
      tlsCa,
      username,
      password,
      db: url.db,
      masterName: url.masterName,
      connectTimeoutMs,
      commandTimeoutMs,
    }),
  };
}

type ParsedUrl =
  | {
      ok: true;
      mode: RedisMode;
      tls: boolean;
      nodes: readonly RedisNode[];
      username: string | undefined;
      password: string | undefined;
      db: number;
      masterName: string | undefined;
    }
  | { ok: false; problem: string };

function parseUrl(raw: string): ParsedUrl {
  const shape = /^([a-z+]+:)\/\/(?:([^@/?#]*)@)?([^/?#]+)(\/[^?#]*)?$/.exec(raw);
  if (shape === null)
    return { ok: false, problem: 'expected scheme://[user:password@]host[:port][,host:port…][/db or /mastername]' };
  const [, scheme = '', userinfo, hostList = '', path = ''] = shape;
  const kind = SCHEMES[scheme];
  if (kind === undefined)
    return {
      ok: false,
      problem: 'expected redis, rediss, redis+sentinel, rediss+sentinel, redis+cluster or rediss+cluster',
    };
  const nodes: RedisNode[] = [];
  for (const part of hostList.split(',')) {
    const node = parseNode(part, DEFAULT_PORT[kind.mode]);
    if (node === undefined) return { ok: false, problem: 'expected host[:port] entries separated by commas' };
    nodes.push(Object.freeze(node));
  }
  if (nodes.length > MAX_NODES) return { ok: false, problem: `expected at most ${MAX_NODES} hosts` };
  if (kind.mode === 'standalone' && nodes.length !== 1)
    return {
      ok: false,
      problem: 'a standalone URL names one host; use redis+sentinel:// or redis+cluster:// for several',
    };

  let username: string | undefined;
  let password: string | undefined;
  if (userinfo !== undefined) {
    const colon = userinfo.indexOf(':');
    const user = decode(colon < 0 ? userinfo : userinfo.slice(0, colon));
    const pass = colon < 0 ? '' : decode(userinfo.slice(colon + 1));
    if (user === undefined || pass === undefined)
      return { ok: false, problem: 'credentials in the URL are not valid percent-encoding' };
    if (user !== '' && !isCredential(user))
      return { ok: false, problem: 'the URL user name must be 1-256 printable characters' };
    if (pass !== '' && !isCredential(pass))
      return { ok: false, problem: 'the URL password must be 1-256 printable characters' };
    username = user === '' ? undefined : user;
    password = pass === '' ? undefined : pass;
  }

  const segment = path.replace(/^\//, '');
  let db = 0;
  let masterName: string | undefined;
  if (kind.mode === 'sentinel') {
    if (!MASTER_NAME.test(segment)) return { ok: false, problem: 'a sentinel URL ends with /mastername' };
    masterName = segment;
  } else if (segment !== '') {
    if (kind.mode === 'cluster') return { ok: false, problem: 'a cluster URL takes no database path' };
    if (!/^\d{1,2}$/.test(segment)) return { ok: false, problem: 'the path must be a database number from 0 to 99' };
    db = Number(segment);
  }
  return { ok: true, mode: kind.mode, tls: kind.tls, nodes: Object.freeze(nodes), username, password, db, masterName };
}

function parseNode(text: string, defaultPort: number): RedisNode | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(text);
  if (m === null) return undefined;
  const host = m[1] ?? m[2] ?? '';
  if (m[1] !== undefined ? !IPV6.test(host) : !HOST.test(host)) return undefined;
  const port = m[3] === undefined ? defaultPort : Number(m[3]);
  if (!(port >= 1 && port <= 65535)) return undefined;
  return { host, port };
}

function decode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

function isCredential(s: string): boolean {
  // oxlint-disable-next-line no-control-regex -- refusing control characters is what this checks
  return s.length >= 1 && s.length <= 256 && !/[\u0000-\u001f\u007f]/.test(s);
}

function isTimeout(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 1 && n <= 600_000;
}

function readSafely(read: Read, path: string): string | undefined {
  try {
    return read(path);
  } catch {
    return undefined;
  }
}

export interface ClientOptions {
  /** Shown in CLIENT LIST, to tell toolgate's connections apart. */
  readonly name?: string;
}

/**
 * The ioredis options every toolgate connection uses. Offline queue off and
 * one retry per request: a command sent while Redis is away fails at once.
 */
export function redisOptions(config: RedisConfig, options: ClientOptions = {}): RedisOptions {
  const tls = config.tls ? (config.tlsCa === undefined ? {} : { ca: config.tlsCa }) : undefined;
  return {
    username: config.username,
    password: config.password,
    db: config.db,
    connectTimeout: config.connectTimeoutMs,
    commandTimeout: config.commandTimeoutMs,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    // The subscriber hub (subscriber.ts) subscribes again itself on 'ready',
    // with the failure handled; ioredis' own resubscription leaves a rejected
    // promise nobody handles when the connection drops again at once (a
    // replica answered and toolgate reconnected), which would end the process.
    autoResubscribe: false,
    // Auto-pipelining batches the concurrent L2 reads of many first requests into one round trip.
    enableAutoPipelining: true,
    connectionName: options.name,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 5), MAX_RECONNECT_DELAY_MS),
    ...(tls === undefined ? {} : { tls }),
  };
}

/** Creates a client for the configured topology; it connects in the background. */
export function createRedisClient(config: RedisConfig, options: ClientOptions = {}): RedisClient {
  const base = redisOptions(config, options);
  const client =
    config.mode === 'cluster'
      ? createCluster(config, base)
      : new Redis(
          config.mode === 'sentinel'
            ? {
                ...base,
                sentinels: config.nodes.map((n) => ({ host: n.host, port: n.port })),
                name: config.masterName,
                sentinelUsername: config.username,
                sentinelPassword: config.password,
                enableTLSForSentinelMode: config.tls,
                sentinelCommandTimeout: config.commandTimeoutMs,
                // Sentinel announces a new master on +switch-master; without listening,
                // the client stays on the old master until Sentinel reconfigures it
                // (about 10 s later) and keeps reading revisions it no longer writes.
                failoverDetector: true,
              }
            : { ...base, host: config.nodes[0]?.host, port: config.nodes[0]?.port },
        );
  // ioredis reports connection trouble as 'error' events; without a listener
  // Node would crash the process. Trouble surfaces as failed commands instead.
  client.on('error', () => {});
  return client;
}

function createCluster(config: RedisConfig, base: RedisOptions): Cluster {
  const { retryStrategy, enableOfflineQueue: _perNode, ...nodeOptions } = base;
  const options: ClusterOptions = {
    redisOptions: nodeOptions,
    enableOfflineQueue: false,
    enableAutoPipelining: true,
    clusterRetryStrategy: (times) => (retryStrategy as (n: number) => number)(times),
    slotsRefreshTimeout: config.connectTimeoutMs,
    // Cluster retries CLUSTERDOWN, TRYAGAIN and redirections on its own, past
    // any per-node command timeout; callers bound each command with
    // `redisCall` (cache/breaker.ts), and these keep the retries inside that bound.
    maxRedirections: 3,
    retryDelayOnClusterDown: Math.min(100, config.commandTimeoutMs),
    retryDelayOnTryAgain: Math.min(100, config.commandTimeoutMs),
    retryDelayOnFailover: Math.min(100, config.commandTimeoutMs),
  };
  return new Cluster(
    config.nodes.map((n) => ({ host: n.host, port: n.port })),
    options,
  );
}
