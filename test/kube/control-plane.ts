/**
 * A real Kubernetes control plane on loopback for tests: etcd,
 * kube-apiserver and kube-controller-manager from test/kube/controlplane, with
 * certificates made for this run, ready once /readyz answers and the
 * controller manager has made the default ServiceAccount (without it the API
 * server refuses every Pod). There is no scheduler and no kubelet, so Pods
 * stay Pending: what is tested is what the API server stores.
 *
 * stop() ends every process and removes the folder; a test process that dies
 * first takes its children with it (SIGKILL on exit).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { freePort } from '../helpers/ports.ts';
import { waitFor } from '../helpers/wait.ts';
import { buildBinaries, builtBinaries, type Binaries } from './binaries.ts';
import { makePki, writeKubeconfig } from './pki.ts';

export interface ControlPlane {
  readonly server: string;
  /** Admin (system:masters) kubeconfig. */
  readonly kubeconfig: string;
  readonly version: string;
  /** The CA that signed the API server's certificate. */
  readonly caFile: string;
  /** The service-account token issuer (`iss`), and the API server's default token audience. */
  readonly issuer: string;
  readonly dir: string;
  /** The API server's audit log (JSON lines, Metadata level for Pods). */
  readonly auditLog: string;
  /** One request to the API server as admin, with a JSON body; the answer parsed where it is JSON. */
  api(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

function start(binary: string, args: readonly string[], log: string): ChildProcess {
  const out = openSync(log, 'a');
  const child = spawn(binary, args, { stdio: ['ignore', out, out] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

const ISSUER = 'https://kubernetes.default.svc.cluster.local';

const AUDIT_POLICY = JSON.stringify({
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  omitStages: ['RequestReceived'],
  rules: [{ level: 'Metadata', resources: [{ group: '', resources: ['pods'] }] }, { level: 'None' }],
});

/** Why the control plane cannot run here, for node:test's `skip`; false when it can. */
export function controlPlaneUnavailable(): false | string {
  if (builtBinaries() !== undefined) return false;
  try {
    buildBinaries();
    return false;
  } catch (err) {
    return `the test control plane could not be built (${(err as Error).message.split('\n')[0]}); see docs/testing.md`;
  }
}

export async function startControlPlane(binaries: Binaries = buildBinaries()): Promise<ControlPlane> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-kube-'));
  const pki = makePki(dir);
  const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const server = `https://127.0.0.1:${apiPort}`;
  const kubeconfig = join(dir, 'admin.kubeconfig');
  writeKubeconfig(kubeconfig, server, pki.ca.cert, pki.admin);
  const kcmKubeconfig = join(dir, 'controller-manager.kubeconfig');
  writeKubeconfig(kcmKubeconfig, server, pki.ca.cert, pki.controllerManager);
  const auditLog = join(dir, 'audit.log');
  writeFileSync(join(dir, 'audit-policy.json'), AUDIT_POLICY);
  mkdirSync(join(dir, 'etcd'));

  const processes: ChildProcess[] = [];
  const agent = new Agent({
    connect: { ca: readFileSync(pki.ca.cert), cert: readFileSync(pki.admin.cert), key: readFileSync(pki.admin.key) },
  });
  const stop = async () => {
    for (const child of processes.toReversed()) await stopChild(child);
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  };
  const api = async (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) => {
    const res = await request(`${server}${path}`, {
      method,
      dispatcher: agent,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* plain-text endpoints such as /readyz */
    }
    return { status: res.statusCode, body: parsed };
  };
  const exitedEarly = (child: ChildProcess, name: string) => {
    if (child.exitCode === null && child.signalCode === null) return;
    const tail = readFileSync(join(dir, `${name}.log`), 'utf8')
      .trimEnd()
      .split('\n')
      .slice(-15)
      .join('\n');
    throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}); the end of its log:\n${tail}`);
  };

  try {
    const etcd = start(
      binaries.path('etcd'),
      [
        '--name',
        'default',
        '--data-dir',
        join(dir, 'etcd'),
        '--listen-client-urls',
        `http://127.0.0.1:${etcdPort}`,
        '--advertise-client-urls',
        `http://127.0.0.1:${etcdPort}`,
        '--listen-peer-urls',
        `http://127.0.0.1:${peerPort}`,
        '--initial-advertise-peer-urls',
        `http://127.0.0.1:${peerPort}`,
        '--initial-cluster',
        `default=http://127.0.0.1:${peerPort}`,
        '--unsafe-no-fsync',
        '--log-level',
        'warn',
      ],
      join(dir, 'etcd.log'),
    );
    processes.push(etcd);
    const apiserver = start(
      binaries.path('kube-apiserver'),
      [
        '--etcd-servers',
        `http://127.0.0.1:${etcdPort}`,
        '--bind-address',
        '127.0.0.1',
        '--advertise-address',
        '127.0.0.1',
        '--secure-port',
        String(apiPort),
        '--tls-cert-file',
        pki.serving.cert,
        '--tls-private-key-file',
        pki.serving.key,
        '--client-ca-file',
        pki.ca.cert,
        '--authorization-mode',
        'RBAC',
        '--service-cluster-ip-range',
        '10.96.0.0/16',
        '--service-account-issuer',
        ISSUER,
        '--service-account-key-file',
        pki.serviceAccount.publicKey,
        '--service-account-signing-key-file',
        pki.serviceAccount.privateKey,
        '--audit-policy-file',
        join(dir, 'audit-policy.json'),
        '--audit-log-path',
        auditLog,
        '--audit-log-format',
        'json',
        '--profiling=false',
        '--v',
        '1',
      ],
      join(dir, 'kube-apiserver.log'),
    );
    processes.push(apiserver);
    await waitFor(
      async () => {
        exitedEarly(etcd, 'etcd');
        exitedEarly(apiserver, 'kube-apiserver');
        return (await api('GET', '/readyz').catch(() => ({ status: 0 }))).status === 200;
      },
      'kube-apiserver /readyz',
      120_000,
    );
    const controllerManager = start(
      binaries.path('kube-controller-manager'),
      [
        '--kubeconfig',
        kcmKubeconfig,
        '--authentication-kubeconfig',
        kcmKubeconfig,
        '--authorization-kubeconfig',
        kcmKubeconfig,
        '--bind-address',
        '127.0.0.1',
        '--secure-port',
        String(await freePort()),
        '--leader-elect=false',
        '--use-service-account-credentials',
        '--service-account-private-key-file',
        pki.serviceAccount.privateKey,
        '--root-ca-file',
        pki.ca.cert,
        '--cluster-signing-cert-file',
        pki.ca.cert,
        '--cluster-signing-key-file',
        pki.ca.key,
        '--controllers',
        '*,-nodeipam,-nodelifecycle,-cloud-node-lifecycle,-service-lb-controller,-route,-persistentvolume-binder,-attachdetach',
        '--v',
        '1',
      ],
      join(dir, 'kube-controller-manager.log'),
    );
    processes.push(controllerManager);
    await waitFor(
      async () => {
        exitedEarly(controllerManager, 'kube-controller-manager');
        return (await api('GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200;
      },
      'the default ServiceAccount',
      120_000,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    server,
    kubeconfig,
    version: binaries.version,
    caFile: pki.ca.cert,
    issuer: ISSUER,
    dir,
    auditLog,
    api,
    stop,
  };
}
