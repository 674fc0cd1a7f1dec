/**
 * `toolgate inject-webhook [flags]`: the mutating admission webhook that adds
 * the toolgate sidecar to pods that opt in. Runs until SIGTERM/SIGINT, then
 * stops accepting connections and exits 0. Settings: src/inject/settings.ts.
 */
import { loadInjectorConfig } from '../inject/config.ts';
import { CertificateError, startWebhookServer } from '../inject/server.ts';
import { loadWebhookSettings, WEBHOOK_USAGE } from '../inject/settings.ts';
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
    for (const e of config.errors) process.stderr.write(`toolgate inject-webhook: invalid config ${e.path || '/'}  ${e.message}\n`);
    return 2;
  }
  let server;
  try {
    server = await startWebhookServer({
      host: s.host, port: s.port, certFile: s.certFile, keyFile: s.keyFile, certReloadMs: s.certReloadMs, config: config.config,
    });
  } catch (err) {
    const why = err instanceof CertificateError ? err.message : 'cannot listen on the webhook port or load the certificate';
    process.stderr.write(`toolgate inject-webhook: ${why}\n`);
    return 2;
  }
  log.info('inject webhook listening', { port: server.port, image: config.config.image });
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  log.info('inject webhook shutting down');
  await server.close();
  return 0;
}
