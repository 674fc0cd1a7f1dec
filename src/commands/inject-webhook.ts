/**
 * `toolgate inject-webhook [flags]`: the mutating admission webhook that adds
 * the toolgate sidecar to pods that opt in, with its metrics on a plain-HTTP
 * port. Runs until SIGTERM/SIGINT, then stops accepting connections and exits
 * 0. Settings: src/inject/settings.ts.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StartupError } from '../errors.ts';
import { createAdminServer } from '../http/admin.ts';
import { listen } from '../http/lifecycle.ts';
import { configProblems, loadInjectorConfig } from '../inject/config.ts';
import { createInjectorMetrics } from '../inject/metrics.ts';
import { CertificateError, startWebhookServer } from '../inject/server.ts';
import { loadWebhookSettings, WEBHOOK_USAGE, webhookBind } from '../inject/settings.ts';
import { log, setLogLevel } from '../telemetry/log.ts';

export const USAGE = WEBHOOK_USAGE;

export async function run(argv: readonly string[]): Promise<number> {
  const settings = loadWebhookSettings(argv, process.env);
  if (!settings.ok) {
    process.stderr.write(`toolgate inject-webhook: ${settings.reason}\n`);
    return 2;
  }
  const s = settings.value;
  setLogLevel(s.logLevel);
  const config = await loadInjectorConfig(s.configFile);
  if (!config.ok) {
    for (const line of configProblems(s.configFile, config.errors))
      process.stderr.write(`toolgate inject-webhook: ${line}\n`);
    return 2;
  }
  const metrics = createInjectorMetrics();
  let server;
  let admin: Server | undefined;
  try {
    server = await startWebhookServer({
      bind: webhookBind(s, 'port'),
      certFile: s.certFile,
      keyFile: s.keyFile,
      certReloadMs: s.certReloadMs,
      config: config.config,
      metrics,
    });
    if (s.metricsPort > 0) {
      admin = createAdminServer(metrics.registry, { reasons: () => [] });
      await listen(admin, webhookBind(s, 'metricsPort'));
    }
  } catch (err) {
    if (!(err instanceof CertificateError || err instanceof StartupError)) throw err;
    await server?.close();
    process.stderr.write(`toolgate inject-webhook: ${err.message}\n`);
    return 2;
  }
  log.info('inject webhook listening', {
    port: server.port,
    metricsPort: admin === undefined ? 0 : (admin.address() as AddressInfo).port,
    image: config.config.image,
    sidecarMode: config.config.sidecarMode,
  });
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  log.info('inject webhook shutting down');
  await server.close();
  await new Promise<void>((resolve) => (admin === undefined ? resolve() : admin.close(() => resolve())));
  return 0;
}
