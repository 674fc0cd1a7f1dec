/**
 * The composition root of the process: settings → upstream pool → the
 * mode's own root, loaded with one `import()` (modes/policy.ts with a policy
 * file, else modes/transparent.ts) → servers; and the reverse on SIGTERM,
 * with a drain.
 *
 * Everything opened registers its close on one AsyncDisposableStack the
 * moment it opens, so a start that fails at any step closes exactly what it
 * opened, in reverse order, and a stop runs the same teardown after the
 * drain. What only a setting needs is imported where that setting is read:
 * policy mode with a policy file, the gRPC API with TOOLGATE_GRPC.
 */
import type { AddressInfo } from 'node:net';
import type { Settings } from './config/settings.ts';
import type { RunningGrpc } from './grpc/server.ts';
import { createAdminServer } from './http/admin.ts';
import { installClientErrorHandler } from './http/client-error.ts';
import { createServer } from './http/node-http.ts';
import { createTrafficHandler } from './http/handler.ts';
import { closeServer, countConnections, drain, listen } from './http/lifecycle.ts';
import { bindOf } from './http/listen-error.ts';
import type { Mode } from './modes/mode.ts';
import { startHeapTrim, type HeapTrimmer } from './telemetry/heap-trim.ts';
import { log, setLogLevel } from './telemetry/log.ts';
import { createMetrics } from './telemetry/metrics/metrics.ts';
import { startTelemetry } from './telemetry/start.ts';
import { createUpstreamPool } from './upstream/pool.ts';
import { waitForUpstream } from './upstream/probe.ts';

export interface Toolgate {
  readonly port: number;
  readonly adminPort: number;
  /** The gRPC API port, when TOOLGATE_GRPC is on. */
  readonly grpcPort: number | undefined;
  /** The approver page's port, when TOOLGATE_APPROVAL_PORT is set (with a policy). */
  readonly approvalPort: number | undefined;
  /** Resolves once the upstream has answered (the readiness condition). */
  readonly ready: Promise<void>;
  /**
   * Stops accepting, lets in-flight requests and open streams finish for up
   * to `drainTimeoutMs`, then closes whatever is left.
   */
  close(): Promise<void>;
}

export async function start(settings: Settings): Promise<Toolgate> {
  setLogLevel(settings.logLevel);
  for (const warning of settings.warnings) log.warn(warning);
  const stack = new AsyncDisposableStack();
  try {
    return await open(settings, stack);
  } catch (err) {
    // Nothing opened so far may keep the process alive, or leak into an in-process caller (the tests).
    await stack.disposeAsync();
    throw err;
  }
}

async function open(settings: Settings, stack: AsyncDisposableStack): Promise<Toolgate> {
  const metrics = createMetrics();
  stack.defer(() => metrics.dispose());
  const pool = createUpstreamPool(settings);
  stack.defer(() => pool.close());
  const mode: Mode =
    settings.policyFile === undefined
      ? (await import('./modes/transparent.ts')).openTransparent(settings, pool)
      : await (await import('./modes/policy.ts')).openPolicy(settings, settings.policyFile, pool, stack);

  const telemetry = await startTelemetry(settings, { sideEffect: (tool) => mode.sideEffect(tool) });
  stack.defer(() => telemetry.close());
  const handleTraffic = createTrafficHandler(settings, mode.path);
  const traffic = createServer(
    {
      maxHeaderSize: settings.maxHeaderBytes,
      requireHostHeader: false,
      headersTimeout: settings.clientHeadersTimeoutMs,
      // Node checks the header timeout on this period; its default (30 s)
      // let slow connections outlive the timeout by that much.
      connectionsCheckingInterval: Math.min(1000, settings.clientHeadersTimeoutMs),
    },
    handleTraffic,
  );
  // Answered by the request path once it reads the body (stages/body.ts), not by Node on arrival.
  traffic.on('checkContinue', handleTraffic);
  countConnections(traffic, settings.maxConnections);
  // One more than the limit, so the handler can tell "at the limit" from
  // "over it" (Node silently drops fields past maxHeadersCount).
  traffic.maxHeadersCount = settings.maxHeaders + 1;
  installClientErrorHandler(traffic);

  const lifetime = new AbortController();
  stack.defer(() => lifetime.abort());
  let upstreamAnswered = false;
  let draining = false;
  const reasons = () => {
    const out: string[] = [];
    if (draining) out.push('draining');
    if (!upstreamAnswered) out.push('upstream_not_answered');
    if (!mode.synced()) out.push('catalogue_not_synced');
    return out;
  };
  const admin = createAdminServer(metrics.registry, { reasons });
  stack.defer(() => closeServer(admin));
  // Closed by the drain on a stop; on a failed start, by the stack.
  stack.defer(() => closeServer(traffic));
  await Promise.all([listen(traffic, bindOf(settings, 'port')), listen(admin, bindOf(settings, 'adminPort'))]);
  let grpc: RunningGrpc | undefined;
  if (settings.grpcEnabled) {
    const running = await import('./grpc/server.ts').then((m) =>
      m.startGrpcServer({ settings, notReadyReasons: reasons, policy: mode.grpc }),
    );
    stack.defer(() => running.close(0));
    grpc = running;
  }
  const port = (traffic.address() as AddressInfo).port;
  const adminPort = (admin.address() as AddressInfo).port;
  log.info('listening', {
    port,
    adminPort,
    grpcPort: grpc?.port,
    upstream: settings.upstream.origin,
    mcpPath: settings.mcpPath,
  });

  const answered = waitForUpstream(pool, settings.mcpPath, lifetime.signal).then(() => {
    if (!lifetime.signal.aborted) upstreamAnswered = true;
  });
  let trimmer: HeapTrimmer | undefined;
  stack.defer(() => trimmer?.stop());
  const ready = Promise.all([answered, mode.firstSync]).then(() => {
    if (lifetime.signal.aborted) return;
    log.info('ready');
    // From ready on: the start-up is the first activity it may give back.
    if (settings.heapTrimIdleMs > 0) trimmer = startHeapTrim(settings.heapTrimIdleMs);
  });
  // A stop before the first catalogue sync rejects `ready`: an in-process caller that awaits it sees
  // why, and the CLI, which does not wait for it, must not die of the rejection on its way out.
  ready.catch(() => undefined);

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      draining = true;
      lifetime.abort();
      await Promise.all([drain(traffic, settings.drainTimeoutMs), grpc?.close(settings.drainTimeoutMs)]);
      await stack.disposeAsync();
      log.info('stopped');
    })();
    return closing;
  };
  return { port, adminPort, grpcPort: grpc?.port, approvalPort: mode.approvalPort, ready, close };
}
