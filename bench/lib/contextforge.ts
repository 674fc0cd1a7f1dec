/**
 * The gateway peer: IBM ContextForge (`mcp-contextforge-gateway` on PyPI), the
 * MCP gateway a platform team would try instead of toolgate, run the way its
 * own production stack runs it (docker-compose.yml, run-gunicorn.sh,
 * gunicorn.config.py of its repository): gunicorn with uvicorn workers, 2 × CPUs + 1
 * of them, the app preloaded, PostgreSQL as its database and Redis as its cache,
 * rate limiting and access logs off. Everything runs here as child processes on
 * the proxies' CPU, and every one of them counts as the peer's CPU and memory.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../../test/helpers/ports.ts';
import { REDIS_SERVER } from '../../test/helpers/redis.ts';
import { accepts, answers200, scratchDir, spawnProgram, waitReady, type Child } from './children.ts';
import { placement } from './cpus.ts';
import { processTree } from './procstat.ts';
import { MCP_HEADERS, type BenchRequest } from './request.ts';
import type { Launcher, Target } from './targets.ts';

/** 1.1.0 is not on PyPI; this is the newest release there. */
const CONTEXTFORGE_VERSION = '1.0.7.post20260921';
/** Its `postgres` extra asks for psycopg[binary,c]; the `c` part needs a compiler and libpq headers, and `binary` is the same driver prebuilt. */
const PSYCOPG = 'psycopg[binary]==3.3.9';
const POSTGRES_BIN = '/usr/lib/postgresql/15/bin';
const ADMIN = 'admin@example.com';
/** The gateway name prefixes the upstream's tool names (`bench-stub-search-issues`). */
const GATEWAY_NAME = 'bench-stub';
/** A fixed id, so the virtual server's endpoint is known before it exists. */
const SERVER_ID = '0b5e11c4a7d94f3e8c2a6b1d9e7f4a30';

const cacheDir = resolve(import.meta.dirname, '..', '..', '.cache', 'contextforge', CONTEXTFORGE_VERSION);

/**
 * ContextForge in front of the stub, behind a virtual server that holds the
 * one allowed tool, called with a bearer JWT. The target
 * rewrites every bench request into the gateway's own (path, token, tool name).
 */
export function contextForge(name: string): Launcher {
  return async (ctx) => {
    const venv = install();
    const dir = scratchDir('toolgate-bench-contextforge-');
    const companions: Child[] = [];
    const stopAll = async (): Promise<void> => {
      for (const c of companions.reverse()) await c.stop();
      rmSync(dir, { recursive: true, force: true });
    };
    try {
      const postgres = await startPostgres(dir);
      companions.push(postgres.child);
      const redisPort = await freePort();
      const redis = spawnProgram(
        `${name}-redis`,
        REDIS_SERVER,
        ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        {},
        'proxies',
      );
      companions.push(redis);
      await waitReady(redis, () => accepts(redisPort));
      const port = await freePort();
      const secret = randomBytes(32).toString('hex');
      const env = {
        ...settings(secret, postgres.url, `redis://127.0.0.1:${redisPort}/0`),
        HOST: '127.0.0.1',
        PORT: String(port),
      };
      const gunicorn = spawnProgram(name, join(venv, 'bin', 'gunicorn'), gunicornArgs(dir, port), env, 'proxies');
      companions.push(gunicorn);
      const origin = `http://127.0.0.1:${port}`;
      // Its first start creates the schema (alembic) and the admin: tens of seconds on a busy machine.
      await waitReady(gunicorn, () => answers200(`${origin}/health`), 180_000);
      // The caller's token is a JWT minted by ContextForge's own tool. An API token scoped to the virtual
      // server (POST /tokens, permissions [tools.execute]) was refused its allowed call too ("Access denied",
      // the RBAC layer of streamablehttp_transport.py), so the rule is the virtual server's tool list.
      const token = adminToken(venv, env, 1440);
      await provision(origin, adminToken(venv, env, 60), ctx.stub.origin);
      const session = await openSession(origin, token);
      const roots = [gunicorn.pid, postgres.child.pid, redis.pid];
      const target: Target = {
        name,
        origin,
        pid: gunicorn.pid,
        gracefulExit: false,
        processes: () => processTree(roots),
        adapt: (req) => asGatewayCall(req, token, session),
        answersReserialized: true,
        stop: async () => {
          await stopAll();
          return 0;
        },
      };
      return target;
    } catch (err) {
      await stopAll();
      throw err;
    }
  };
}

/**
 * The venv under .cache/contextforge/<version>/, installed from PyPI on first
 * use; `installed` is written last, so an interrupted install starts over.
 */
function install(): string {
  const venv = join(cacheDir, 'venv');
  const marker = join(cacheDir, 'installed');
  if (existsSync(marker)) return venv;
  rmSync(cacheDir, { recursive: true, force: true });
  mkdirSync(cacheDir, { recursive: true });
  run('python3', ['-m', 'venv', venv], 'creating the ContextForge virtual environment (python3 -m venv)');
  run(
    join(venv, 'bin', 'pip'),
    [
      'install',
      '--disable-pip-version-check',
      '--no-input',
      '--quiet',
      `mcp-contextforge-gateway[redis]==${CONTEXTFORGE_VERSION}`,
      PSYCOPG,
    ],
    `installing ContextForge ${CONTEXTFORGE_VERSION} from PyPI`,
  );
  writeFileSync(marker, `mcp-contextforge-gateway[redis]==${CONTEXTFORGE_VERSION} ${PSYCOPG}\n`);
  return venv;
}

function run(
  file: string,
  args: readonly string[],
  what: string,
  user?: string,
  env: Readonly<Record<string, string>> = {},
): string {
  const [cmd, argv] =
    user === undefined
      ? [file, args]
      : ['setpriv', [`--reuid=${user}`, `--regid=${user}`, '--init-groups', file, ...args]];
  const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 900_000, env: { ...process.env, ...env } });
  if (r.error !== undefined) throw new Error(`${what}: ${r.error.message}`);
  if (r.status !== 0) {
    const tail = `${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-6).join('\n');
    throw new Error(`${what}: exit ${r.status ?? r.signal}\n${tail}`);
  }
  return r.stdout;
}

/**
 * A throwaway cluster on a free port, trust authentication on loopback only.
 * PostgreSQL refuses to run as root, so as root it runs as the `postgres` user.
 */
async function startPostgres(dir: string): Promise<{ child: Child; url: string }> {
  const user = process.getuid?.() === 0 ? 'postgres' : undefined;
  const pgDir = join(dir, 'pg');
  mkdirSync(pgDir);
  if (user !== undefined) {
    // mkdtemp makes `dir` root's alone; the postgres user must pass through it to its own directory.
    chmodSync(dir, 0o711);
    chownSync(
      pgDir,
      Number(run('id', ['-u', user], `finding the ${user} user`)),
      Number(run('id', ['-g', user], `finding the ${user} group`)),
    );
  }
  const data = join(pgDir, 'data');
  run(
    join(POSTGRES_BIN, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'],
    "initdb for ContextForge's database",
    user,
  );
  const port = await freePort();
  const args = ['-D', data, '-p', String(port), '-k', pgDir, '-c', 'listen_addresses=127.0.0.1'];
  const [file, argv] =
    user === undefined
      ? [join(POSTGRES_BIN, 'postgres'), args]
      : ['setpriv', [`--reuid=${user}`, `--regid=${user}`, '--init-groups', join(POSTGRES_BIN, 'postgres'), ...args]];
  // setpriv execs postgres, so the child's pid is the postmaster's, and the backends it forks are its children.
  const child = spawnProgram('contextforge-postgres', file, argv, {}, 'proxies');
  await waitReady(child, () => accepts(port));
  return { child, url: `postgresql+psycopg://postgres@127.0.0.1:${port}/postgres` };
}

/**
 * run-gunicorn.sh's command: uvicorn workers, 2 × CPUs + 1 (capped at 16) of
 * them, where the CPUs are those the peer may run on (one when pinned), the
 * app preloaded, access log off; gunicorn.config.py's post_fork hook, which
 * preloading needs (each worker its own database pool and Redis client).
 */
function gunicornArgs(dir: string, port: number): string[] {
  const cpus = placement === undefined ? availableParallelism() : 1;
  const config = join(dir, 'gunicorn.conf.py');
  writeFileSync(
    config,
    [
      'def post_fork(server, worker):',
      '    from mcpgateway.db import engine',
      '    engine.dispose(close=False)',
      '    from mcpgateway.utils.redis_client import _reset_client',
      '    _reset_client()',
      '',
    ].join('\n'),
  );
  return [
    '-c',
    config,
    '--worker-class',
    'uvicorn.workers.UvicornWorker',
    '--workers',
    String(Math.min(2 * cpus + 1, 16)),
    '--timeout',
    '600',
    '--max-requests',
    '100000',
    '--max-requests-jitter',
    '100',
    '--access-logfile',
    '/dev/null',
    '--error-logfile',
    '-',
    '--forwarded-allow-ips',
    '*',
    '--preload',
    '--bind',
    `127.0.0.1:${port}`,
    'mcpgateway.main:app',
  ];
}

/**
 * The gateway service's environment in ContextForge's docker-compose.yml,
 * where it bears on a tools/call through a virtual server; loopback upstreams
 * allowed (the stub), the admin UI off (the admin API stays on: it registers the stub).
 * The compose file's MCP_SESSION_POOL_* lines are left out: this release has no
 * such settings (its Settings class ignores them); it reuses upstream sessions
 * per downstream Mcp-Session-Id instead, which is why stateful sessions are on.
 */
function settings(secret: string, databaseUrl: string, redisUrl: string): Record<string, string> {
  return {
    JWT_SECRET_KEY: secret,
    JWT_ALGORITHM: 'HS256',
    JWT_AUDIENCE: 'mcpgateway-api',
    JWT_ISSUER: 'mcpgateway',
    AUTH_ENCRYPTION_SECRET: randomBytes(32).toString('hex'),
    PLATFORM_ADMIN_EMAIL: ADMIN,
    PLATFORM_ADMIN_PASSWORD: randomBytes(16).toString('hex'),
    REQUIRE_USER_IN_DB: 'false',
    DATABASE_URL: databaseUrl,
    DB_POOL_CLASS: 'queue',
    DB_POOL_PRE_PING: 'true',
    DB_POOL_SIZE: '20',
    DB_MAX_OVERFLOW: '10',
    DB_POOL_TIMEOUT: '60',
    DB_POOL_RECYCLE: '60',
    CACHE_TYPE: 'redis',
    REDIS_URL: redisUrl,
    REDIS_PARSER: 'hiredis',
    REDIS_MAX_CONNECTIONS: '50',
    REDIS_SOCKET_TIMEOUT: '5.0',
    REDIS_SOCKET_CONNECT_TIMEOUT: '5.0',
    AUTH_REQUIRED: 'true',
    MCP_CLIENT_AUTH_ENABLED: 'true',
    MCP_REQUIRE_AUTH: 'true',
    AUTH_CACHE_ENABLED: 'true',
    AUTH_CACHE_USER_TTL: '300',
    AUTH_CACHE_REVOCATION_TTL: '120',
    AUTH_CACHE_TEAM_TTL: '300',
    AUTH_CACHE_ROLE_TTL: '300',
    AUTH_CACHE_TEAMS_TTL: '300',
    AUTH_CACHE_BATCH_QUERIES: 'true',
    REGISTRY_CACHE_ENABLED: 'true',
    REGISTRY_CACHE_TOOLS_TTL: '300',
    REGISTRY_CACHE_SERVERS_TTL: '300',
    REGISTRY_CACHE_GATEWAYS_TTL: '300',
    METRICS_CACHE_ENABLED: 'true',
    METRICS_CACHE_TTL_SECONDS: '120',
    HEALTH_CHECK_INTERVAL: '300',
    HEALTH_CHECK_TIMEOUT: '5',
    TRANSPORT_TYPE: 'streamablehttp',
    USE_STATEFUL_SESSIONS: 'true',
    MCPGATEWAY_SESSION_AFFINITY_ENABLED: 'true',
    STREAMABLE_HTTP_MAX_EVENTS_PER_STREAM: '100',
    // Its mitigations for the anyio#695 spin on cancelled connections.
    SSE_SEND_TIMEOUT: '30.0',
    SSE_RAPID_YIELD_WINDOW_MS: '1000',
    SSE_RAPID_YIELD_MAX: '50',
    SSE_TASK_GROUP_CLEANUP_TIMEOUT: '0.5',
    ANYIO_CANCEL_DELIVERY_PATCH_ENABLED: 'false',
    RATE_LIMITING_ENABLED: 'false',
    TOOL_RATE_LIMIT: '60000',
    TOOL_CONCURRENT_LIMIT: '1000',
    TOOL_TIMEOUT: '60',
    HTTPX_MAX_CONNECTIONS: '500',
    HTTPX_MAX_KEEPALIVE_CONNECTIONS: '300',
    HTTPX_KEEPALIVE_EXPIRY: '30.0',
    LOG_LEVEL: 'ERROR',
    LOG_FORMAT: 'text',
    DISABLE_ACCESS_LOG: 'true',
    COMPRESSION_ENABLED: 'false',
    VALIDATION_MIDDLEWARE_ENABLED: 'false',
    SECURITY_HEADERS_ENABLED: 'true',
    CORRELATION_ID_ENABLED: 'false',
    OBSERVABILITY_ENABLED: 'false',
    AUDIT_TRAIL_ENABLED: 'false',
    SECURITY_LOGGING_ENABLED: 'false',
    STRUCTURED_LOGGING_DATABASE_ENABLED: 'false',
    DB_METRICS_RECORDING_ENABLED: 'true',
    ENABLE_METRICS: 'true',
    MCPGATEWAY_UI_ENABLED: 'false',
    MCPGATEWAY_ADMIN_API_ENABLED: 'true',
    SSRF_ALLOW_LOCALHOST: 'true',
    SSRF_ALLOW_PRIVATE_NETWORKS: 'true',
    SSRF_DNS_FAIL_CLOSED: 'false',
  };
}

/** A JWT for the admin, minted by ContextForge's own tool with the gateway's settings (it loads them, secret included), valid `minutes`. */
function adminToken(venv: string, env: Readonly<Record<string, string>>, minutes: number): string {
  const out = run(
    join(venv, 'bin', 'python'),
    ['-m', 'mcpgateway.utils.create_jwt_token', '--username', ADMIN, '--exp', String(minutes)],
    'minting a ContextForge token',
    undefined,
    env,
  );
  return out.trim().split('\n').at(-1) as string;
}

/**
 * Registers the stub as a gateway and puts only `search_issues` in a virtual
 * server: a caller of that server may call `search_issues` and nothing else.
 */
async function provision(origin: string, admin: string, stub: string): Promise<void> {
  const call = async (path: string, body: unknown): Promise<any> => {
    const res = await fetch(origin + path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`ContextForge ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  await call('/gateways', { name: GATEWAY_NAME, url: `${stub}/mcp`, transport: 'STREAMABLEHTTP' });
  const tools: Array<{ id: string; originalName?: string }> = await call('/tools', undefined);
  const search = (Array.isArray(tools) ? tools : []).find((t) => t.originalName === 'search_issues');
  if (search === undefined) throw new Error("ContextForge did not list the stub's search_issues tool");
  await call('/servers', { server: { id: SERVER_ID, name: 'bench', associated_tools: [search.id] } });
}

/**
 * What an MCP client does once before its calls: `initialize`, then
 * `notifications/initialized`; the Mcp-Session-Id it gets rides on every
 * call. Without one, this release opens a fresh upstream session per call (a
 * new httpx client, hence a new TLS context loaded from the CA bundle even for
 * plain http, then initialize, the call and a DELETE): py-spy put 29% of the
 * workers' samples in ssl.create_default_context alone.
 */
async function openSession(origin: string, token: string): Promise<string> {
  const post = (body: unknown, session?: string): Promise<Response> =>
    fetch(origin + serverPath, {
      method: 'POST',
      headers: {
        ...MCP_HEADERS,
        authorization: `Bearer ${token}`,
        ...(session === undefined ? {} : { 'mcp-session-id': session }),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  const init = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: MCP_HEADERS['mcp-protocol-version'],
      capabilities: {},
      clientInfo: { name: 'toolgate-bench', version: '1' },
    },
  });
  const text = await init.text();
  const session = init.headers.get('mcp-session-id');
  if (!init.ok || session === null)
    throw new Error(`ContextForge initialize answered ${init.status} without a session: ${text.slice(0, 300)}`);
  const ack = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  await ack.arrayBuffer();
  if (ack.status !== 202) throw new Error(`ContextForge answered notifications/initialized with ${ack.status}`);
  return session;
}

/** The virtual server's endpoint (its `/v1/...` successor, which the deprecation header names, answers 404 in this release). */
const serverPath = `/servers/${SERVER_ID}/mcp`;

/** A bench request as ContextForge takes it: the virtual server's endpoint, its token and session, the gateway-prefixed tool name. */
function asGatewayCall(req: BenchRequest, token: string, session: string): BenchRequest {
  const msg = JSON.parse(req.body);
  if (typeof msg.params?.name === 'string') msg.params.name = `${GATEWAY_NAME}-${msg.params.name.replaceAll('_', '-')}`;
  return {
    ...req,
    path: serverPath,
    headers: { ...req.headers, authorization: `Bearer ${token}`, 'mcp-session-id': session },
    body: JSON.stringify(msg),
  };
}
