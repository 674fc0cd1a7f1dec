/**
 * The gRPC API on its own port: Health always, and with a policy the
 * PolicyService, DiscoveryService and GrantAdmin, whose callers are
 * authenticated by the verifiers of the policy in force. Plaintext (h2c) by
 * default, TLS when a certificate and key are configured.
 */
import { readFile } from 'node:fs/promises';
import { Server, ServerCredentials, setLogger } from '@grpc/grpc-js';
import { StartupError } from '../errors.ts';
import { bindOf, listenError } from '../http/listen-error.ts';
import type { GrpcServerOptions } from './deps.ts';
import { HealthService } from './health.ts';
import {
  ApprovalService,
  ContractService,
  DiscoveryService,
  GrantAdminService,
  POLICY_SERVICES,
  PolicyService,
} from './services.ts';

export interface RunningGrpc {
  readonly port: number;
  /** Lets calls in flight finish for up to `graceMs`, then cuts the rest. */
  close(graceMs: number): Promise<void>;
}

/**
 * grpc-js's own logger, but for the line it prints when a bind fails: the
 * StartupError says the same in one line that names the setting.
 */
const BIND_FAILED = 'No address added out of total';
setLogger({
  error: (message: unknown, ...rest: unknown[]) => {
    if (!String(message).startsWith(BIND_FAILED)) console.error(`E ${String(message)}`, ...rest);
  },
  info: (message: unknown, ...rest: unknown[]) => console.error(`I ${String(message)}`, ...rest),
  debug: (message: unknown, ...rest: unknown[]) => console.error(`D ${String(message)}`, ...rest),
});

/** Requests larger than this are refused by grpc-js (RESOURCE_EXHAUSTED) before any handler runs. */
const MAX_REQUEST_BYTES = 1024 * 1024 + 64 * 1024;

export async function startGrpcServer(options: GrpcServerOptions): Promise<RunningGrpc> {
  const { settings, policy } = options;
  const server = new Server({ 'grpc.max_receive_message_length': MAX_REQUEST_BYTES });
  const health = new HealthService(policy === undefined ? [] : POLICY_SERVICES, options.notReadyReasons);
  health.addToServer(server);
  if (policy !== undefined) {
    new PolicyService(policy, settings.grpcAdminScope).addToServer(server);
    new DiscoveryService(policy).addToServer(server);
    new ContractService(policy, settings.grpcAdminScope).addToServer(server);
    new ApprovalService(policy, settings.grpcAdminScope).addToServer(server);
    new GrantAdminService(policy, settings.grpcAdminScope).addToServer(server);
  }
  const credentials = await serverCredentials(settings.grpcTlsCertFile, settings.grpcTlsKeyFile);
  const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${settings.grpcPort}`, credentials, (err, bound) => {
      if (err === null) resolve(bound);
      // grpc-js gives only a message, which carries the system's error code.
      else reject(listenError(/\b(E[A-Z]+)\b/.exec(err.message)?.[1], bindOf(settings, 'grpcPort')));
    });
  });
  // Closed by the drain on a stop and again by the teardown that follows it: the first call decides.
  let closing: Promise<void> | undefined;
  return {
    port,
    close: (graceMs) =>
      (closing ??= new Promise((resolve) => {
        health.close();
        const force = setTimeout(() => server.forceShutdown(), graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      })),
  };
}

async function serverCredentials(
  certFile: string | undefined,
  keyFile: string | undefined,
): Promise<ServerCredentials> {
  if (certFile === undefined || keyFile === undefined) return ServerCredentials.createInsecure();
  try {
    const [cert, key] = await Promise.all([readFile(certFile), readFile(keyFile)]);
    return ServerCredentials.createSsl(null, [{ cert_chain: cert, private_key: key }], false);
  } catch {
    throw new StartupError(
      'invalid setting TOOLGATE_GRPC_TLS_CERT_FILE: cannot read the certificate or key, or they are not PEM',
    );
  }
}
