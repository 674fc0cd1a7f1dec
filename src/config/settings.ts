/**
 * Process settings: every one is a flag and a TOOLGATE_* environment variable,
 * parsed and validated once at start, then frozen. An invalid value stops
 * start-up with one line naming the setting (never echoing secrets). The README
 * configuration table is kept equal to this list by a test.
 */
import { SettingError } from '../errors.ts';
import { readFlags, settingName, usage, type FlagDef } from './flags.ts';
import { isIdentityHeaderName } from '../mcp/headers.ts';
import { parsePrefixes } from '../mcp/target.ts';

export interface Settings {
  readonly upstream: URL;
  readonly host: string;
  readonly port: number;
  readonly adminPort: number;
  readonly mcpPath: string;
  /** Path prefixes forwarded unchecked while a policy is on; every other path but the MCP endpoint is refused. */
  readonly passthroughPaths: readonly string[];
  readonly maxBodyBytes: number;
  readonly maxHeaderBytes: number;
  readonly maxHeaders: number;
  readonly upstreamTimeoutMs: number;
  readonly upstreamBodyIdleMs: number;
  readonly upstreamConnections: number;
  readonly drainTimeoutMs: number;
  readonly clientHeadersTimeoutMs: number;
  /** 0: no cap. */
  readonly maxConnections: number;
  readonly logLevel: LogLevel;
  /** Absent: no policy, toolgate forwards everything (transparent mode). */
  readonly policyFile: string | undefined;
  readonly catalogueRefreshMs: number;
  /** 0: never. */
  readonly heapTrimIdleMs: number;
  readonly deferredTools: boolean;
  /** How tools/call refusals the model can fix are answered from MCP 2025-11-25 on. */
  readonly toolErrors: ToolErrors;
  /** Ungranted tools are answered as unknown_tool, so callers cannot learn the catalogue. */
  readonly hideUngranted: boolean;
  readonly sessionIdleMs: number;
  /** Lower-case field name that tells the server who called; absent: the server is told nothing. */
  readonly principalHeader: string | undefined;
  /** Absent: grants, replay records and revisions live in process (one replica). */
  readonly redisUrl: string | undefined;
  readonly redisUsername: string | undefined;
  readonly redisPasswordFile: string | undefined;
  readonly redisTlsCaFile: string | undefined;
  readonly redisConnectTimeoutMs: number;
  readonly redisCommandTimeoutMs: number;
  /** Replicas that must acknowledge a one-time token id; undefined: 1 with Sentinel, else 0. */
  readonly redisReplayWaitReplicas: number | undefined;
  readonly policyDomain: string;
  readonly grantSource: 'file' | 'redis';
  readonly grantsStalenessMs: number;
  readonly grantsCheckIntervalMs: number;
  readonly grantsL1MaxEntries: number;
  readonly grantsL2TtlSeconds: number;
  /** Where audit events go: `stdout`, a file path (appended), or absent (off). */
  readonly auditLog: string | undefined;
  readonly auditQueueEvents: number;
  readonly grpcEnabled: boolean;
  readonly grpcPort: number;
  readonly grpcTlsCertFile: string | undefined;
  readonly grpcTlsKeyFile: string | undefined;
  readonly grpcAdminScope: string;
  readonly retryBudgetPercent: number;
  readonly retryBudgetMin: number;
  readonly retryBudgetWindowMs: number;
  readonly retryBackoffMs: number;
  readonly breakerConsecutiveFailures: number;
  readonly breakerFailurePercent: number;
  readonly breakerWindowCalls: number;
  readonly breakerOpenMs: number;
  readonly idempotencyRetentionMs: number;
  readonly idempotencyMaxResultBytes: number;
  /** Journal of idempotency records for a replica without Redis; undefined: in process only. */
  readonly idempotencyFile: string | undefined;
  /** The approver page's port; undefined: no page (approvals are decided by the CLI or gRPC only). */
  readonly approvalPort: number | undefined;
  /** The page's address as approvers reach it (Ingress); undefined: http://<host>:<approval port>. */
  readonly approvalPublicUrl: string | undefined;
  /** Key for approval request states, page sessions and CSRF tokens; undefined: random per process (one replica). */
  readonly approvalSecretFile: string | undefined;
  /** Lower-case header an authenticating proxy sets to the approver's id; undefined: approvers sign in with a credential. */
  readonly approvalTrustedHeader: string | undefined;
  /** Lower-case header with the approver's scopes (space- or comma-separated), read with approvalTrustedHeader. */
  readonly approvalTrustedScopesHeader: string | undefined;
  readonly approvalWebhookUrl: string | undefined;
  readonly approvalWebhookSecretFile: string | undefined;
  /** How long a 2026-07-28 continuation waits for a pending approval to be decided before it is asked to come back. */
  readonly approvalWaitMs: number;
  /** One line per setting that was invalid but tolerated (it names only the setting). */
  readonly warnings: readonly string[];
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type ToolErrors = 'result' | 'protocol';

type Parsed<T> = { readonly value: T; readonly warning?: string } | { readonly problem: string };

const ok = <T>(value: T): Parsed<T> => ({ value });
const bad = (problem: string): Parsed<never> => ({ problem });

interface SettingDef<K extends keyof Settings> {
  readonly key: K;
  readonly flag: string;
  readonly env: string;
  readonly default: string;
  readonly doc: string;
  readonly parse: (raw: string) => Parsed<Settings[K]>;
}

function int(min: number, max: number) {
  return (raw: string): Parsed<number> => {
    const n = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
    return n >= min && n <= max ? ok(n) : bad(`expected a whole number from ${min} to ${max}`);
  };
}

const port = int(0, 65535);

function httpUrl(raw: string): Parsed<string> {
  if (!URL.canParse(raw)) return bad('expected an absolute http or https URL');
  const u = new URL(raw);
  if (
    (u.protocol !== 'http:' && u.protocol !== 'https:') ||
    u.username !== '' ||
    u.password !== '' ||
    u.search !== '' ||
    u.hash !== ''
  ) {
    return bad('expected an absolute http or https URL without credentials, query or fragment');
  }
  return ok(raw.replace(/\/+$/, ''));
}

function optionalText(raw: string): Parsed<string | undefined> {
  if (raw === '') return ok(undefined);
  return /[\0\r\n]/.test(raw) ? bad('expected one line of text') : ok(raw);
}

/**
 * The seed rule for booleans: a typo must not take the service down, and
 * must not silently turn a feature on; the warning names only the setting.
 */
function boolean(warning: string) {
  return (raw: string): Parsed<boolean> => {
    if (raw === '' || /^(false|0|off|no)$/i.test(raw)) return ok(false);
    if (/^(true|1|on|yes)$/i.test(raw)) return ok(true);
    return { value: false, warning };
  };
}

/** The sidecar's policy domain when none is set; the admin commands default to it too. */
export const DEFAULT_POLICY_DOMAIN = 'default';

function setting<K extends keyof Settings>(d: SettingDef<K>): SettingDef<K> {
  return d;
}

export const settingDefs = [
  setting({
    key: 'upstream',
    flag: '--upstream',
    env: 'TOOLGATE_UPSTREAM',
    default: 'http://127.0.0.1:3000',
    doc: 'Origin of the MCP server (scheme, host, port); request targets are forwarded normalised (see the MCP path).',
    parse: (raw) => {
      if (!URL.canParse(raw)) return bad('expected an http:// or https:// URL');
      const u = new URL(raw);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') return bad('expected an http:// or https:// URL');
      if (u.username || u.password) return bad('credentials in the URL are not supported');
      if (u.pathname !== '/' || u.search || u.hash) return bad('expected an origin without path, query or fragment');
      return ok(u);
    },
  }),
  setting({
    key: 'host',
    flag: '--host',
    env: 'TOOLGATE_HOST',
    default: '0.0.0.0',
    doc: 'Address the traffic and admin listeners bind to.',
    parse: (raw) => (raw.length > 0 && !/\s/.test(raw) ? ok(raw) : bad('expected an address')),
  }),
  setting({
    key: 'port',
    flag: '--port',
    env: 'TOOLGATE_PORT',
    default: '8080',
    doc: 'Traffic port that MCP clients connect to (0 picks a free port).',
    parse: port,
  }),
  setting({
    key: 'adminPort',
    flag: '--admin-port',
    env: 'TOOLGATE_ADMIN_PORT',
    default: '9090',
    doc: 'Admin port: /healthz, /readyz, /metrics (0 picks a free port).',
    parse: port,
  }),
  setting({
    key: 'mcpPath',
    flag: '--mcp-path',
    env: 'TOOLGATE_MCP_PATH',
    default: '/mcp',
    doc: 'Path of the MCP endpoint, exactly as the server serves it (`/mcp/` for one that redirects `/mcp`): requests for the endpoint are forwarded to this path. Recognised as lenient routers match it: without regard to case, a trailing slash or `;params`, after dot segments and repeated slashes are resolved.',
    parse: (raw) => (/^\/[A-Za-z0-9._~!$&'()*+,;=:@/-]*$/.test(raw) ? ok(raw) : bad('expected an absolute path')),
  }),
  setting({
    key: 'passthroughPaths',
    flag: '--passthrough-paths',
    env: 'TOOLGATE_PASSTHROUGH_PATHS',
    default: '/.well-known/',
    doc: 'With a policy: comma-separated path prefixes forwarded without any check (OAuth metadata must be reachable without a credential); every other path but the MCP endpoint gets 404 not_found. A prefix ending in `/` covers what is below it, one without covers itself too. Empty: none. Without a policy every path is forwarded.',
    parse: (raw) => {
      const prefixes = parsePrefixes(raw);
      return prefixes !== undefined
        ? ok(prefixes)
        : bad('expected comma-separated absolute paths without dot segments, repeated slashes or escapes');
    },
  }),
  setting({
    key: 'maxBodyBytes',
    flag: '--max-body-bytes',
    env: 'TOOLGATE_MAX_BODY_BYTES',
    default: '4194304',
    doc: 'Largest request body accepted; enforced while streaming (413 payload_too_large).',
    parse: int(1, 1 << 30),
  }),
  setting({
    key: 'maxHeaderBytes',
    flag: '--max-header-bytes',
    env: 'TOOLGATE_MAX_HEADER_BYTES',
    default: '16384',
    doc: 'Largest request head (request line and headers) accepted (431 headers_too_large).',
    parse: int(1024, 1 << 20),
  }),
  setting({
    key: 'maxHeaders',
    flag: '--max-headers',
    env: 'TOOLGATE_MAX_HEADERS',
    default: '100',
    doc: 'Most request header fields accepted (431 headers_too_large).',
    parse: int(8, 2000),
  }),
  setting({
    key: 'upstreamTimeoutMs',
    flag: '--upstream-timeout-ms',
    env: 'TOOLGATE_UPSTREAM_TIMEOUT_MS',
    default: '30000',
    doc: 'How long to wait for the upstream to connect and send response headers (504 upstream_unavailable); a tool whose policy sets timeoutMs (for the tool or in defaults) uses that instead for its tools/call.',
    parse: int(1, 3_600_000),
  }),
  setting({
    key: 'upstreamBodyIdleMs',
    flag: '--upstream-body-idle-ms',
    env: 'TOOLGATE_UPSTREAM_BODY_IDLE_MS',
    default: '30000',
    doc: 'Longest silence between chunks of an upstream response body once its headers arrived (the client connection is then cut, the upstream request aborted; 504 upstream_unavailable when nothing was sent yet). Event streams (SSE) are exempt: they end when either side closes. 0: no bound.',
    parse: int(0, 3_600_000),
  }),
  setting({
    key: 'upstreamConnections',
    flag: '--upstream-connections',
    env: 'TOOLGATE_UPSTREAM_CONNECTIONS',
    default: '256',
    doc: 'Most keep-alive connections to the upstream at once.',
    parse: int(1, 65535),
  }),
  setting({
    key: 'drainTimeoutMs',
    flag: '--drain-timeout-ms',
    env: 'TOOLGATE_DRAIN_TIMEOUT_MS',
    default: '25000',
    doc: 'On SIGTERM, how long in-flight requests and open SSE streams may take to finish.',
    parse: int(0, 3_600_000),
  }),
  setting({
    key: 'clientHeadersTimeoutMs',
    flag: '--client-headers-timeout-ms',
    env: 'TOOLGATE_CLIENT_HEADERS_TIMEOUT_MS',
    default: '10000',
    doc: 'How long a client may take to send a request head, counted from the connection or the previous response (408 request_timeout, connection closed); bounds slow and idle connections.',
    parse: int(1000, 300_000),
  }),
  setting({
    key: 'maxConnections',
    flag: '--max-connections',
    env: 'TOOLGATE_MAX_CONNECTIONS',
    default: '0',
    doc: 'Most client connections open at once on the traffic port; further ones are closed on arrival and counted (toolgate_client_connections_refused_total). 0: no cap.',
    parse: int(0, 1_000_000),
  }),
  setting({
    key: 'logLevel',
    flag: '--log-level',
    env: 'TOOLGATE_LOG_LEVEL',
    default: 'info',
    doc: 'Least severe log level written to stderr: debug, info, warn or error.',
    parse: (raw) =>
      raw === 'debug' || raw === 'info' || raw === 'warn' || raw === 'error'
        ? ok(raw)
        : bad('expected debug, info, warn or error'),
  }),
  setting({
    key: 'policyFile',
    flag: '--policy-file',
    env: 'TOOLGATE_POLICY_FILE',
    default: '',
    doc: 'Policy YAML (grants, tool metadata, authentication). Empty: no enforcement, every request is forwarded.',
    parse: (raw) => (raw === '' ? ok(undefined) : /[\0\n\r]/.test(raw) ? bad('expected a file path') : ok(raw)),
  }),
  setting({
    key: 'catalogueRefreshMs',
    flag: '--catalogue-refresh-ms',
    env: 'TOOLGATE_CATALOGUE_REFRESH_MS',
    default: '60000',
    doc: "How often toolgate re-reads the upstream's tools/list (also refreshed on notifications/tools/list_changed).",
    parse: int(1000, 86_400_000),
  }),
  setting({
    key: 'heapTrimIdleMs',
    flag: '--heap-trim-idle-ms',
    env: 'TOOLGATE_HEAP_TRIM_IDLE_MS',
    default: '5000',
    doc: 'Once the process has been idle this long (under 2% of a CPU) after activity, the start-up included, one memory-reducing garbage collection gives the heap it no longer uses back to the system; it holds the event loop for tens of milliseconds. Each trim doubles the idle time the next one needs, up to 10 minutes (traffic after a trim costs extra CPU for a few seconds). A policy load (start-up or reload) that grew the heap by more than 64 MB (a static key file of many thousand keys) is followed by one at once. 0: never.',
    parse: (raw) => {
      const window = raw === '0' ? ok(0) : int(1000, 3_600_000)(raw);
      return 'value' in window ? window : bad('expected 0 or a whole number from 1000 to 3600000');
    },
  }),
  setting({
    key: 'deferredTools',
    flag: '--deferred-tools',
    env: 'TOOLGATE_DEFERRED_TOOLS',
    default: '',
    doc: 'Deferred tool listing: tools/list carries critical, base and alwaysInclude tools plus search_tools; the rest are found through discovery. true/false; unset, empty or invalid: off (invalid also logs one warning).',
    parse: boolean('TOOLGATE_DEFERRED_TOOLS is not a boolean; deferred tool listing is off'),
  }),
  setting({
    key: 'toolErrors',
    flag: '--tool-errors',
    env: 'TOOLGATE_TOOL_ERRORS',
    default: 'result',
    doc: 'How refusals are written: `result`, in the form each client hands on (a tools/call refusal is a tool result with `isError: true`, other methods get a JSON-RPC error in a 200 answer, and an HTTP status stays only for authentication, step-up, framing and the session; see "Refusals reach the model"); `protocol`, every refusal with its registry HTTP status, as before 0.2, for clients that depend on it.',
    parse: (raw) => (raw === 'result' || raw === 'protocol' ? ok(raw) : bad('expected result or protocol')),
  }),
  setting({
    key: 'hideUngranted',
    flag: '--hide-ungranted',
    env: 'TOOLGATE_HIDE_UNGRANTED',
    default: '',
    doc: 'A tools/call of a tool the caller is not granted is answered as `unknown_tool`, exactly like a tool that does not exist, so callers cannot probe the catalogue. Off: an unknown tool is `unknown_tool` and an ungranted one `tool_not_granted` with the scopes that would help. true/false; unset, empty or invalid: off (invalid also logs one warning).',
    parse: boolean('TOOLGATE_HIDE_UNGRANTED is not a boolean; ungranted tools are answered as not granted'),
  }),
  setting({
    key: 'sessionIdleMs',
    flag: '--session-idle-ms',
    env: 'TOOLGATE_SESSION_IDLE_MS',
    default: '86400000',
    doc: 'With a policy, each MCP session id is usable only by the principal whose initialize created it; a binding unused this long is forgotten (the session then gets 404 session_not_found and the client starts a new one). At most 100,000 are kept, least recently used dropped first.',
    parse: int(60_000, 2_592_000_000),
  }),
  setting({
    key: 'principalHeader',
    flag: '--principal-header',
    env: 'TOOLGATE_PRINCIPAL_HEADER',
    default: '',
    doc: "With a policy, a request header (for example `X-Toolgate-Principal`) that carries the authenticated principal id to the server on every MCP request, in the MCP header encoding (`=?base64?…?=` when not visible ASCII), so a server can keep its state per caller; the client's own copy of the field is dropped on every path, with or without a policy. Empty: none. Credential, hop-by-hop, content, host, cookie, forwarding, trace and `Mcp-` fields are refused.",
    parse: (raw) =>
      raw === ''
        ? ok(undefined)
        : isIdentityHeaderName(raw)
          ? ok(raw.toLowerCase())
          : bad('expected a header field name toolgate does not already use'),
  }),
  setting({
    key: 'auditLog',
    flag: '--audit-log',
    env: 'TOOLGATE_AUDIT_LOG',
    default: '',
    doc: 'Audit events (OCSF API Activity JSON lines for calls of tools that are not read-only, for every denial, and for every result the result guard acted on): `stdout`, a file path (appended), or empty for none.',
    parse: (raw) =>
      raw === '' ? ok(undefined) : /[\0\n\r]/.test(raw) ? bad('expected stdout or a file path') : ok(raw),
  }),
  setting({
    key: 'auditQueueEvents',
    flag: '--audit-queue-events',
    env: 'TOOLGATE_AUDIT_QUEUE_EVENTS',
    default: '10000',
    doc: 'Audit events waiting to be written at most; when the output cannot keep up, further events are dropped and counted (toolgate_audit_events_total{outcome="dropped"}).',
    parse: int(1, 1_000_000),
  }),
  setting({
    key: 'redisUrl',
    flag: '--redis-url',
    env: 'TOOLGATE_REDIS_URL',
    default: '',
    doc: 'Redis shared by replicas: redis:// or rediss:// (standalone), redis+sentinel://h:p,h:p/master, redis+cluster://h:p,h:p. Empty: everything in process.',
    parse: optionalText,
  }),
  setting({
    key: 'redisUsername',
    flag: '--redis-username',
    env: 'TOOLGATE_REDIS_USERNAME',
    default: '',
    doc: 'Redis ACL user (overrides one in the URL).',
    parse: optionalText,
  }),
  setting({
    key: 'redisPasswordFile',
    flag: '--redis-password-file',
    env: 'TOOLGATE_REDIS_PASSWORD_FILE',
    default: '',
    doc: 'File holding the Redis password, e.g. a mounted Secret (overrides one in the URL).',
    parse: optionalText,
  }),
  setting({
    key: 'redisTlsCaFile',
    flag: '--redis-tls-ca-file',
    env: 'TOOLGATE_REDIS_TLS_CA_FILE',
    default: '',
    doc: 'PEM bundle to trust for rediss:// connections.',
    parse: optionalText,
  }),
  setting({
    key: 'redisConnectTimeoutMs',
    flag: '--redis-connect-timeout-ms',
    env: 'TOOLGATE_REDIS_CONNECT_TIMEOUT_MS',
    default: '2000',
    doc: 'Redis connect timeout.',
    parse: int(50, 60_000),
  }),
  setting({
    key: 'redisCommandTimeoutMs',
    flag: '--redis-command-timeout-ms',
    env: 'TOOLGATE_REDIS_COMMAND_TIMEOUT_MS',
    default: '500',
    doc: 'Redis command timeout; a grant lookup that misses the in-process cache fails closed (503) after it, and for one second after a timeout calls needing Redis are refused at once (then one probes).',
    parse: int(10, 60_000),
  }),
  setting({
    key: 'redisReplayWaitReplicas',
    flag: '--redis-replay-wait-replicas',
    env: 'TOOLGATE_REDIS_REPLAY_WAIT_REPLICAS',
    default: 'auto',
    doc: 'Replicas that must acknowledge (Redis WAIT) a used one-time token id before the token is accepted, an approval spend or an idempotency claim before its call runs, and a contract pin before it is trusted, so a failover cannot forget any of them; unacknowledged, the write is taken back and the call gets 503 credential_check_unavailable, approval_unavailable or idempotency_unavailable (retryable), the approval stays usable and the tool stays unpinned. auto: 1 with redis+sentinel://, else 0.',
    parse: (raw) => (raw === 'auto' ? ok(undefined) : int(0, 16)(raw)),
  }),
  setting({
    key: 'policyDomain',
    flag: '--policy-domain',
    env: 'TOOLGATE_POLICY_DOMAIN',
    default: DEFAULT_POLICY_DOMAIN,
    doc: 'Policy domain: replicas sharing a domain share grants and one control revision in Redis.',
    parse: (raw) =>
      /^[A-Za-z0-9._-]{1,64}$/.test(raw) ? ok(raw) : bad('expected 1-64 letters, digits, dots, dashes or underscores'),
  }),
  setting({
    key: 'grantSource',
    flag: '--grant-source',
    env: 'TOOLGATE_GRANT_SOURCE',
    default: 'file',
    doc: "Where grant rows come from: file (the policy file's grants) or redis (rows managed with toolgate grants; needs TOOLGATE_REDIS_URL).",
    parse: (raw) => (raw === 'file' || raw === 'redis' ? ok(raw) : bad('expected file or redis')),
  }),
  setting({
    key: 'grantsStalenessMs',
    flag: '--grants-staleness-ms',
    env: 'TOOLGATE_GRANTS_STALENESS_MS',
    default: '5000',
    doc: 'With Redis grants: a revision not confirmed for this long makes every call fail closed (503 grants_unavailable).',
    parse: int(100, 600_000),
  }),
  setting({
    key: 'grantsCheckIntervalMs',
    flag: '--grants-check-interval-ms',
    env: 'TOOLGATE_GRANTS_CHECK_INTERVAL_MS',
    default: '1000',
    doc: 'With Redis grants: how often the revision is re-read (pub/sub delivers changes at once; this confirms freshness).',
    parse: int(50, 600_000),
  }),
  setting({
    key: 'grantsL1MaxEntries',
    flag: '--grants-l1-max-entries',
    env: 'TOOLGATE_GRANTS_L1_MAX_ENTRIES',
    default: '10000',
    doc: 'In-process snapshot cache size (principals); least recently used out first.',
    parse: int(1, 10_000_000),
  }),
  setting({
    key: 'grantsL2TtlSeconds',
    flag: '--grants-l2-ttl-seconds',
    env: 'TOOLGATE_GRANTS_L2_TTL_SECONDS',
    default: '300',
    doc: 'With Redis grants: lifetime of a snapshot stored in Redis.',
    parse: int(1, 86_400),
  }),
  setting({
    key: 'grpcEnabled',
    flag: '--grpc',
    env: 'TOOLGATE_GRPC',
    default: '',
    doc: 'gRPC API (health, PolicyService, DiscoveryService, GrantAdmin; see docs/grpc.md) on its own port. true/false; unset, empty or invalid: off (invalid also logs one warning).',
    parse: boolean('TOOLGATE_GRPC is not a boolean; the gRPC API is off'),
  }),
  setting({
    key: 'grpcPort',
    flag: '--grpc-port',
    env: 'TOOLGATE_GRPC_PORT',
    default: '9091',
    doc: 'gRPC API port (0 picks a free port); binds to the same address as the other listeners.',
    parse: port,
  }),
  setting({
    key: 'grpcTlsCertFile',
    flag: '--grpc-tls-cert-file',
    env: 'TOOLGATE_GRPC_TLS_CERT_FILE',
    default: '',
    doc: 'PEM certificate chain for the gRPC port; with --grpc-tls-key-file it serves TLS. Empty: plaintext (h2c).',
    parse: optionalText,
  }),
  setting({
    key: 'grpcTlsKeyFile',
    flag: '--grpc-tls-key-file',
    env: 'TOOLGATE_GRPC_TLS_KEY_FILE',
    default: '',
    doc: 'PEM private key for --grpc-tls-cert-file.',
    parse: optionalText,
  }),
  setting({
    key: 'grpcAdminScope',
    flag: '--grpc-admin-scope',
    env: 'TOOLGATE_GRPC_ADMIN_SCOPE',
    default: 'toolgate.admin',
    doc: 'Scope a gRPC caller must hold for GrantAdmin and for PolicyService.Explain about another principal.',
    parse: (raw) =>
      /^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/.test(raw)
        ? ok(raw)
        : bad('expected a scope (printable ASCII, no spaces, quotes or backslashes)'),
  }),
  setting({
    key: 'retryBudgetPercent',
    flag: '--retry-budget-percent',
    env: 'TOOLGATE_RETRY_BUDGET_PERCENT',
    default: '10',
    doc: 'Retries to the upstream may be at most this percentage of its requests over the retry window (Envoy/Finagle retry budget); past it a transient failure is answered, not retried. 0: no retries at all.',
    parse: int(0, 100),
  }),
  setting({
    key: 'retryBudgetMin',
    flag: '--retry-budget-min',
    env: 'TOOLGATE_RETRY_BUDGET_MIN',
    default: '3',
    doc: 'Retries always allowed per retry window whatever the percentage, so a quiet replica can still retry.',
    parse: int(0, 10_000),
  }),
  setting({
    key: 'retryBudgetWindowMs',
    flag: '--retry-budget-window-ms',
    env: 'TOOLGATE_RETRY_BUDGET_WINDOW_MS',
    default: '10000',
    doc: 'Sliding window over which the retry budget counts requests and retries.',
    parse: int(1000, 3_600_000),
  }),
  setting({
    key: 'retryBackoffMs',
    flag: '--retry-backoff-ms',
    env: 'TOOLGATE_RETRY_BACKOFF_MS',
    default: '25',
    doc: "First retry delay; each further retry doubles it (at most 2 s), with full jitter, and no retry waits past the call's deadline.",
    parse: int(1, 60_000),
  }),
  setting({
    key: 'breakerConsecutiveFailures',
    flag: '--breaker-consecutive-failures',
    env: 'TOOLGATE_BREAKER_CONSECUTIVE_FAILURES',
    default: '5',
    doc: 'The upstream circuit breaker opens after this many failures in a row (connect refused or reset, timeouts, 502/503/504). 0: only the failure ratio opens it.',
    parse: int(0, 10_000),
  }),
  setting({
    key: 'breakerFailurePercent',
    flag: '--breaker-failure-percent',
    env: 'TOOLGATE_BREAKER_FAILURE_PERCENT',
    default: '50',
    doc: 'The breaker also opens when at least this percentage of the last `TOOLGATE_BREAKER_WINDOW_CALLS` calls failed (counted once half the window has been seen). 0: only consecutive failures open it.',
    parse: int(0, 100),
  }),
  setting({
    key: 'breakerWindowCalls',
    flag: '--breaker-window-calls',
    env: 'TOOLGATE_BREAKER_WINDOW_CALLS',
    default: '100',
    doc: "Size of the sliding window of calls for the breaker's failure ratio.",
    parse: int(2, 100_000),
  }),
  setting({
    key: 'breakerOpenMs',
    flag: '--breaker-open-ms',
    env: 'TOOLGATE_BREAKER_OPEN_MS',
    default: '5000',
    doc: "How long an open breaker refuses calls (503 upstream_unavailable with retryAfterMs) before it lets one probe through (half-open); the probe's success closes it, its failure opens it again.",
    parse: int(10, 3_600_000),
  }),
  setting({
    key: 'idempotencyRetentionMs',
    flag: '--idempotency-retention-ms',
    env: 'TOOLGATE_IDEMPOTENCY_RETENTION_MS',
    default: '86400000',
    doc: 'How long an idempotency key and its stored result are kept (in Redis when `TOOLGATE_REDIS_URL` is set, else in the `TOOLGATE_IDEMPOTENCY_FILE` journal or in process, at most 100,000 keys, least recently used dropped first).',
    parse: int(1000, 2_592_000_000),
  }),
  setting({
    key: 'idempotencyFile',
    flag: '--idempotency-file',
    env: 'TOOLGATE_IDEMPOTENCY_FILE',
    default: '',
    doc: 'Without Redis: a journal file (on a volume, one process per file) that keeps idempotency records across restarts; each claim is fdatasync-ed before its call is forwarded. Empty: records live in process, which a restart forgets, so keyed calls to non_idempotent_write tools are refused with 503 idempotency_not_durable (logged at start); other keyed calls keep in-process records.',
    parse: optionalText,
  }),
  setting({
    key: 'idempotencyMaxResultBytes',
    flag: '--idempotency-max-result-bytes',
    env: 'TOOLGATE_IDEMPOTENCY_MAX_RESULT_BYTES',
    default: '1048576',
    doc: 'Largest result stored for replay under an idempotency key; a keyed call with a larger result still completes, and its repeat gets 409 idempotent_result_not_stored.',
    parse: int(1024, 64 * 1024 * 1024),
  }),
  setting({
    key: 'approvalPort',
    flag: '--approval-port',
    env: 'TOOLGATE_APPROVAL_PORT',
    default: '',
    doc: 'Port of the approver page (human approval of `require_approval` calls), on the same address as the other listeners; 0 picks a free port. Empty: no page; approvals can still be decided with `toolgate approvals` or gRPC ApprovalService.',
    parse: (raw) => (raw === '' ? ok(undefined) : port(raw)),
  }),
  setting({
    key: 'approvalPublicUrl',
    flag: '--approval-public-url',
    env: 'TOOLGATE_APPROVAL_PUBLIC_URL',
    default: '',
    doc: "The approver page's base URL as approvers reach it (for example the Ingress `https://approve.example.com`); approval URLs sent to callers start with it. Empty: `http://<host>:<approval port>`.",
    parse: (raw) => (raw === '' ? ok(undefined) : httpUrl(raw)),
  }),
  setting({
    key: 'approvalSecretFile',
    flag: '--approval-secret-file',
    env: 'TOOLGATE_APPROVAL_SECRET_FILE',
    default: '',
    doc: 'File holding the key (at least 32 bytes) that signs approval request states, approver sessions and CSRF tokens. Replicas sharing Redis need the same file; empty: a random key per process.',
    parse: optionalText,
  }),
  setting({
    key: 'approvalTrustedHeader',
    flag: '--approval-trusted-header',
    env: 'TOOLGATE_APPROVAL_TRUSTED_HEADER',
    default: '',
    doc: "Behind an authenticating proxy: the request header carrying the approver's id (for example `X-Forwarded-User`). The approver page then trusts it instead of asking for a credential, so only the proxy may reach the page. Empty: approvers sign in with a key or JWT the policy's verifiers accept.",
    parse: (raw) =>
      raw === ''
        ? ok(undefined)
        : isIdentityHeaderName(raw)
          ? ok(raw.toLowerCase())
          : bad('expected a header field name toolgate does not already use'),
  }),
  setting({
    key: 'approvalTrustedScopesHeader',
    flag: '--approval-trusted-scopes-header',
    env: 'TOOLGATE_APPROVAL_TRUSTED_SCOPES_HEADER',
    default: '',
    doc: "With `TOOLGATE_APPROVAL_TRUSTED_HEADER`: the header carrying the approver's scopes or groups, space- or comma-separated (for example `X-Forwarded-Groups`).",
    parse: (raw) =>
      raw === ''
        ? ok(undefined)
        : isIdentityHeaderName(raw)
          ? ok(raw.toLowerCase())
          : bad('expected a header field name toolgate does not already use'),
  }),
  setting({
    key: 'approvalWebhookUrl',
    flag: '--approval-webhook-url',
    env: 'TOOLGATE_APPROVAL_WEBHOOK_URL',
    default: '',
    doc: 'Where toolgate POSTs a signed JSON notice of each new pending approval (ids, tool, digests and the page URL; never argument values). Empty: none.',
    parse: (raw) => (raw === '' ? ok(undefined) : httpUrl(raw)),
  }),
  setting({
    key: 'approvalWebhookSecretFile',
    flag: '--approval-webhook-secret-file',
    env: 'TOOLGATE_APPROVAL_WEBHOOK_SECRET_FILE',
    default: '',
    doc: 'File holding the HMAC-SHA256 key of the webhook\'s `Toolgate-Signature: t=<unix seconds>,v1=<hex HMAC of "<t>.<body>">` header; required with `TOOLGATE_APPROVAL_WEBHOOK_URL`.',
    parse: optionalText,
  }),
  setting({
    key: 'approvalWaitMs',
    flag: '--approval-wait-ms',
    env: 'TOOLGATE_APPROVAL_WAIT_MS',
    default: '30000',
    doc: "On 2026-07-28, how long a repeated call whose approval is still pending waits for the decision (cut to the caller's `Toolgate-Timeout-Ms` budget) before it gets the same `input_required` again, so a client that answers the elicitation at once does not loop. 0: answer at once.",
    parse: int(0, 300_000),
  }),
] as const;

/** One setting's value read exactly as the sidecar reads it, for a command that takes the same flag. */
export function readSetting<K extends keyof Settings>(
  key: K,
  raw: string | undefined,
): { ok: true; value: Settings[K] } | { ok: false; problem: string } {
  const d = settingDefs.find((x) => x.key === key) as unknown as SettingDef<K>;
  const parsed = d.parse(raw ?? d.default);
  return 'problem' in parsed ? { ok: false, problem: parsed.problem } : { ok: true, value: parsed.value };
}

/** `--port / TOOLGATE_PORT`: how a message points at one of the sidecar's settings. */
export function nameOfSetting(key: keyof Settings): string {
  return settingName(settingDefs.find((d) => d.key === key) as FlagDef);
}

/**
 * `toolgate --help`: every setting, from the definitions the README table is
 * made from. The commands come from the CLI's own table, so none is left out.
 */
export function sidecarUsage(commands: readonly string[]): string {
  return usage(
    `usage: toolgate [flags]            run the sidecar\n       toolgate <command> --help   ${commands.join(', ')}`,
    settingDefs,
  );
}

/**
 * Flags win over environment variables, which win over defaults. An empty
 * environment variable counts as unset, as Kubernetes renders optional values.
 * `--help` and `--version` are the CLI's to answer, so here they are an error.
 */
export function loadSettings(argv: readonly string[], env: NodeJS.ProcessEnv): Settings {
  const read = readFlags(argv, settingDefs);
  if (read.kind !== 'values') throw new SettingError(`--${read.kind}`, 'not a setting');
  const flags = new Map(read.values);
  const out: Record<string, unknown> = {};
  const warnings: string[] = [];
  for (const d of settingDefs) {
    const fromFlag = flags.get(d.flag);
    const fromEnv = env[d.env];
    const [raw, source] =
      fromFlag !== undefined
        ? [fromFlag, d.flag]
        : fromEnv !== undefined && fromEnv !== ''
          ? [fromEnv, d.env]
          : [d.default, d.env];
    const parsed = (d.parse as (raw: string) => Parsed<unknown>)(raw);
    if ('problem' in parsed) throw new SettingError(source, parsed.problem);
    if (parsed.warning !== undefined) warnings.push(parsed.warning);
    out[d.key] = parsed.value;
  }
  if (out.grantSource === 'redis' && out.redisUrl === undefined)
    throw new SettingError('TOOLGATE_GRANT_SOURCE', 'redis needs TOOLGATE_REDIS_URL');
  if ((out.grpcTlsCertFile === undefined) !== (out.grpcTlsKeyFile === undefined))
    throw new SettingError('TOOLGATE_GRPC_TLS_KEY_FILE', 'set both TLS files or neither');
  if ((out.approvalWebhookUrl === undefined) !== (out.approvalWebhookSecretFile === undefined))
    throw new SettingError('TOOLGATE_APPROVAL_WEBHOOK_SECRET_FILE', 'set the webhook URL and its secret file together');
  if (out.approvalTrustedScopesHeader !== undefined && out.approvalTrustedHeader === undefined)
    throw new SettingError('TOOLGATE_APPROVAL_TRUSTED_SCOPES_HEADER', 'needs TOOLGATE_APPROVAL_TRUSTED_HEADER');
  out.warnings = Object.freeze(warnings);
  return Object.freeze(out) as unknown as Settings;
}
