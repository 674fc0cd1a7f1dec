import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Settings } from './config/settings.ts';
import { createAdminServer } from './http/admin.ts';
import { installClientErrorHandler } from './http/client-error.ts';
import { createTrafficHandler } from './http/traffic.ts';
import { createMetrics } from './telemetry/metrics.ts';
import { startTelemetry } from './telemetry/start.ts';
import { log, setLogLevel } from './telemetry/log.ts';
import { createUpstreamPool } from './upstream/pool.ts';
import { waitForUpstream } from './upstream/probe.ts';
import { startEnforcement, type RunningEnforcement } from './enforcement.ts';
import { startGrpcServer, type RunningGrpc } from './grpc/server.ts';
import { clientConnection, connectionRefused } from './telemetry/channels.ts';

export interface Toolgate {
  readonly port: number;
  readonly adminPort: number;
  /** The gRPC API port, when TOOLGATE_GRPC is on. */
  readonly grpcPort: number | undefined;
  /** Resolves once the upstream has answered (the readiness condition). */
  readonly ready: Promise<void>;
  /**
   * Stops accepting, lets in-flight requests and open streams finish for up
   * to `drainTimeoutMs`, then closes whatever is left.
   */
  close(): Promise<void>;
}

/** Wiring only: settings → upstream pool → servers. */
export async function start(settings: Settings): Promise<Toolgate> {
  setLogLevel(settings.logLevel);
  for (const warning of settings.warnings) log.warn(warning);
  const metrics = createMetrics();
  const pool = createUpstreamPool(settings);
  const lifetime = new AbortController();
  let upstreamAnswered = false;
  let draining = false;
  let enforcement: RunningEnforcement | undefined;
  if (settings.policyFile !== undefined) {
    enforcement = await startEnforcement(settings, pool).catch(async (err: unknown) => {
      await pool.close();
      metrics.dispose();
      throw err;
    });
  } else {
    log.warn('no policy file configured: every request is forwarded unchecked', { setting: 'TOOLGATE_POLICY_FILE' });
    if (settings.deferredTools) log.warn('deferred tool listing needs a policy; it is off', { setting: 'TOOLGATE_DEFERRED_TOOLS' });
  }

  const telemetry = await startTelemetry(settings, { sideEffect: (tool) => enforcement?.sideEffect(tool) });
  const traffic = createServer(
    {
      maxHeaderSize: settings.maxHeaderBytes,
      requireHostHeader: false,
      headersTimeout: settings.clientHeadersTimeoutMs,
      // Node checks the header timeout on this period; its default (30 s)
      // let slow connections outlive the timeout by that much.
      connectionsCheckingInterval: Math.min(1000, settings.clientHeadersTimeoutMs),
    },
    createTrafficHandler({ settings, pool, enforcer: enforcement?.enforcer }),
  );
  countConnections(traffic, settings.maxConnections);
  // One more than the limit, so the handler can tell "at the limit" from
  // "over it" (Node silently drops fields past maxHeadersCount).
  traffic.maxHeadersCount = settings.maxHeaders + 1;
  installClientErrorHandler(traffic);

  const reasons = () => {
    const out: string[] = [];
    if (draining) out.push('draining');
    if (!upstreamAnswered) out.push('upstream_not_answered');
    if (enforcement !== undefined && !enforcement.synced()) out.push('catalogue_not_synced');
    return out;
  };
  const admin = createAdminServer(metrics.registry, { reasons });

  await Promise.all([listen(traffic, settings.host, settings.port), listen(admin, settings.host, settings.adminPort)]);
  let grpc: RunningGrpc | undefined;
  if (settings.grpcEnabled) {
    grpc = await startGrpcServer({ settings, notReadyReasons: reasons, policy: enforcement?.grpc }).catch(async (err: unknown) => {
      await Promise.all([closeServer(traffic), closeServer(admin), pool.close(), enforcement?.close(), telemetry.close()]);
      metrics.dispose();
      throw err;
    });
  }
  const port = (traffic.address() as AddressInfo).port;
  const adminPort = (admin.address() as AddressInfo).port;
  log.info('listening', { port, adminPort, grpcPort: grpc?.port, upstream: settings.upstream.origin, mcpPath: settings.mcpPath });

  const answered = waitForUpstream(pool, settings.mcpPath, lifetime.signal).then(() => {
    if (!lifetime.signal.aborted) upstreamAnswered = true;
  });
  const ready = Promise.all([answered, enforcement?.firstSync]).then(() => {
    if (!lifetime.signal.aborted) log.info('ready');
  });

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      draining = true;
      lifetime.abort();
      await Promise.all([drain(traffic, settings.drainTimeoutMs), grpc?.close(settings.drainTimeoutMs)]);
      await Promise.all([pool.close(), closeServer(admin), enforcement?.close()]);
      metrics.dispose();
      await telemetry.close();
      log.info('stopped');
    })();
    return closing;
  };
  return { port, adminPort, grpcPort: grpc?.port, ready, close };
}

/** Connections open (a gauge), and the optional cap with its refusals. */
function countConnections(server: Server, max: number): void {
  if (max > 0) server.maxConnections = max;
  server.on('connection', (socket) => {
    if (!clientConnection.hasSubscribers) return;
    clientConnection.publish({ delta: 1 });
    socket.once('close', () => clientConnection.publish({ delta: -1 }));
  });
  server.on('drop', () => {
    if (connectionRefused.hasSubscribers) connectionRefused.publish({});
  });
}

const netServerClose = NetServer.prototype.close;

async function listen(server: Server, host: string, port: number): Promise<void> {
  server.listen(port, host);
  await once(server, 'listening');
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** How long idle keep-alive connections stay open after SIGTERM, so requests already on their way are answered. */
const DRAIN_IDLE_GRACE_MS = 500;

/**
 * Stop accepting, answer every request still arriving with `Connection:
 * close`, and only after a short grace close idle keep-alive connections: a
 * request a client sent just before the signal is then answered and not reset.
 * When the drain window ends the remaining connections are cut.
 */
async function drain(server: Server, timeoutMs: number): Promise<void> {
  // net.Server's close stops accepting but, unlike http.Server's, leaves
  // idle keep-alive connections open.
  const closed = new Promise<void>((resolve) => netServerClose.call(server, () => resolve()));
  // Before the handler, which may answer at once (a 405, a refusal): a
  // header set after the response is sent throws, and would end the process.
  server.prependListener('request', (_req, res) => res.setHeader('connection', 'close'));
  let idleSweep: NodeJS.Timeout | undefined;
  const grace = setTimeout(() => {
    server.closeIdleConnections();
    idleSweep = setInterval(() => server.closeIdleConnections(), 100);
  }, Math.min(DRAIN_IDLE_GRACE_MS, timeoutMs));
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  await Promise.race([closed, timedOut]);
  clearTimeout(grace);
  clearInterval(idleSweep);
  clearTimeout(timer);
  server.closeAllConnections();
  await closed;
}
