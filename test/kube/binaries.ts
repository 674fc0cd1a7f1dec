/**
 * The control plane's binaries: kube-apiserver, kube-controller-manager and
 * etcd, built from the Go module in test/kube/controlplane into a git-ignored
 * folder keyed by the Kubernetes version and a digest of the module's files,
 * so a second run reuses them and a change to the pin builds afresh.
 *
 * `node test/kube/binaries.ts` builds what is missing, fetches the operators'
 * CRDs (crds.ts) and prints the folder;
 * `.ci/run` calls it before the tests, so the suite itself never waits on a
 * cold build in CI.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { goBuildInto } from '../helpers/go-build.ts';
import { allCrdFiles } from './crds.ts';

export const MODULE = join(import.meta.dirname, 'controlplane');
const REPO = join(import.meta.dirname, '../..');

export const COMMANDS = {
  'kube-apiserver': 'k8s.io/kubernetes/cmd/kube-apiserver',
  'kube-controller-manager': 'k8s.io/kubernetes/cmd/kube-controller-manager',
  etcd: './cmd/etcd',
} as const;
export type Command = keyof typeof COMMANDS;

export interface Binaries {
  readonly dir: string;
  readonly version: string;
  readonly path: (command: Command) => string;
}

/** The Kubernetes release the module pins, as its go.mod requires it. */
export function kubernetesVersion(): string {
  const version = /^\s*k8s\.io\/kubernetes\s+(v\S+)/m.exec(readFileSync(join(MODULE, 'go.mod'), 'utf8'))?.[1];
  if (version === undefined) throw new Error('test/kube/controlplane/go.mod does not require k8s.io/kubernetes');
  return version;
}

function moduleFiles(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? moduleFiles(path) : [path];
    })
    .sort();
}

function moduleDigest(): string {
  const hash = createHash('sha256').update(readFileSync(import.meta.filename));
  for (const file of moduleFiles(MODULE))
    hash.update(relative(MODULE, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex').slice(0, 12);
}

/** TOOLGATE_KUBE_BIN names a folder of prebuilt binaries; otherwise the cache under .cache/kube. */
function binDir(env: NodeJS.ProcessEnv): string {
  const given = env.TOOLGATE_KUBE_BIN;
  if (given !== undefined && given !== '') return given;
  return join(REPO, '.cache/kube', `${kubernetesVersion()}-${moduleDigest()}`);
}

const complete = (dir: string): boolean => Object.keys(COMMANDS).every((c) => existsSync(join(dir, c)));

function binaries(dir: string): Binaries {
  return { dir, version: kubernetesVersion(), path: (command) => join(dir, command) };
}

/** The binaries if they are already built, else undefined. */
export function builtBinaries(env: NodeJS.ProcessEnv = process.env): Binaries | undefined {
  const dir = binDir(env);
  return complete(dir) ? binaries(dir) : undefined;
}

/**
 * What Kubernetes' own build stamps in: without it the API server reports
 * v0.0.0-master, which Helm's kubeVersion checks and kubectl's skew check refuse.
 */
function versionFlags(version: string): string {
  const [major, minor] = version.slice(1).split('.');
  return [
    '-s',
    '-w',
    ...['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) => [
      `-X ${pkg}.gitVersion=${version}`,
      `-X ${pkg}.gitMajor=${major}`,
      `-X ${pkg}.gitMinor=${minor}`,
      `-X ${pkg}.gitTreeState=clean`,
    ]),
  ].join(' ');
}

/** Builds what is missing (test/helpers/go-build.ts: staged, then renamed into place). */
export function buildBinaries(env: NodeJS.ProcessEnv = process.env): Binaries {
  const dir = binDir(env);
  if (complete(dir)) return binaries(dir);
  if (env.TOOLGATE_KUBE_BIN !== undefined && env.TOOLGATE_KUBE_BIN !== '') {
    throw new Error(`TOOLGATE_KUBE_BIN=${dir} lacks one of ${Object.keys(COMMANDS).join(', ')}`);
  }
  goBuildInto(dir, {
    module: MODULE,
    args: (staging) => [
      `-ldflags=${versionFlags(kubernetesVersion())}`,
      '-o',
      `${staging}/`,
      ...Object.values(COMMANDS),
    ],
    built: () => complete(dir),
    env,
  });
  return binaries(dir);
}

if (import.meta.main) {
  const started = Date.now();
  const built = buildBinaries();
  const crds = allCrdFiles();
  process.stdout.write(
    `${built.dir} (Kubernetes ${built.version}, ${((Date.now() - started) / 1000).toFixed(0)} s), ${crds.length} operator CRDs\n`,
  );
}
