/**
 * The chart installed with its webhook pointed out of the cluster
 * (webhook.url), and `toolgate inject-webhook` run as a process on the host
 * with what the chart stored: the serving certificate from the webhook's
 * Secret and the injector config from its ConfigMap. The API server reaches
 * it over TLS against the chart's own caBundle, as it would in a cluster.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { freePort } from '../helpers/ports.ts';
import { waitFor } from '../helpers/wait.ts';
import { helm, kubectl, ok } from './cli.ts';
import type { ControlPlane } from './control-plane.ts';

const CLI = join(import.meta.dirname, '../../src/cli.ts');
export const CHART = join(import.meta.dirname, '../../charts/toolgate');
export const RELEASE_NAMESPACE = 'toolgate-system';

export interface HostInjector {
  readonly port: number;
  /** The injector config the chart rendered, as a file the process reads. */
  readonly configFile: string;
  /** Starts the process (again), optionally with another config file. */
  start(configFile?: string): Promise<void>;
  /** Stops the process: the API server then finds nobody at webhook.url. */
  stop(): Promise<void>;
  close(): Promise<void>;
}

const stored = (cp: ControlPlane, kind: string, name: string, key: string): string =>
  ok(
    kubectl(cp, ['-n', RELEASE_NAMESPACE, 'get', kind, name, '-o', `jsonpath={.data.${key.replaceAll('.', '\\.')}}`]),
    `read ${kind}/${name}`,
  );

export async function installWithHostInjector(cp: ControlPlane, values: readonly string[] = []): Promise<HostInjector> {
  const port = await freePort();
  ok(
    helm(cp, [
      'install',
      'toolgate',
      CHART,
      '--namespace',
      RELEASE_NAMESPACE,
      '--create-namespace',
      '--set',
      `webhook.url=https://127.0.0.1:${port}/mutate`,
      ...values,
    ]),
    'helm install',
  );
  const file = (name: string, text: string) => {
    const path = join(cp.dir, `injector-${name}`);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  };
  const secret = (key: string) =>
    Buffer.from(stored(cp, 'secret', 'toolgate-injector-tls', key), 'base64').toString('utf8');
  const cert = file('tls.crt', secret('tls.crt'));
  const key = file('tls.key', secret('tls.key'));
  const ca = secret('ca.crt');
  const configFile = file('config.yaml', stored(cp, 'configmap', 'toolgate-injector', 'config.yaml'));
  const agent = new Agent({ connect: { ca } });

  let child: ChildProcess | undefined;
  const stop = async () => {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  const start = async (config = configFile) => {
    await stop();
    const started = spawn(
      process.execPath,
      [
        CLI,
        'inject-webhook',
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--metrics-port',
        '0',
        '--tls-cert-file',
        cert,
        '--tls-key-file',
        key,
        '--config',
        config,
        '--log-level',
        'error',
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    child = started;
    process.once('exit', () => started.kill('SIGKILL'));
    await waitFor(
      async () => {
        if (started.exitCode !== null) throw new Error(`toolgate inject-webhook exited ${started.exitCode}`);
        return request(`https://127.0.0.1:${port}/healthz`, { dispatcher: agent }).then(
          (r) => r.body.text().then(() => r.statusCode === 200),
          () => false,
        );
      },
      'the injector on the host',
      30_000,
    );
  };
  await start();
  return {
    port,
    configFile,
    start,
    stop,
    close: async () => {
      await stop();
      await agent.close();
    },
  };
}
