/**
 * kubectl and helm against a test control plane, as a user runs them: the
 * admin kubeconfig, Helm's state in the control plane's folder, and the exit
 * code and both streams returned rather than thrown, since what a refusal
 * prints is often the point of the test.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { findHelm, findKubectl } from '../helpers/helm.ts';
import { inCi } from '../helpers/testdata.ts';
import { controlPlaneUnavailable, type ControlPlane } from './control-plane.ts';

export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const KUBECTL = findKubectl();
const HELM = findHelm();

/**
 * For node:test's `skip`: why these tests cannot run here, or false. In CI
 * nothing skips: a control plane that will not build or start fails the tests.
 */
export function kubeSkip(): false | string {
  if (inCi()) return false;
  if (KUBECTL === undefined || HELM === undefined) return 'no kubectl or helm (see test/helpers/helm.ts)';
  return controlPlaneUnavailable();
}

function run(binary: string | undefined, cp: ControlPlane, args: readonly string[], input?: string): Ran {
  if (binary === undefined) throw new Error('kubectl or helm not found (see test/helpers/helm.ts)');
  const env = {
    ...process.env,
    KUBECONFIG: cp.kubeconfig,
    HELM_CACHE_HOME: join(cp.dir, 'helm/cache'),
    HELM_CONFIG_HOME: join(cp.dir, 'helm/config'),
    HELM_DATA_HOME: join(cp.dir, 'helm/data'),
  };
  const r = spawnSync(binary, args, { env, input, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.error !== undefined) throw r.error;
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

export const kubectl = (cp: ControlPlane, args: readonly string[], input?: string): Ran =>
  run(KUBECTL, cp, args, input);
export const helm = (cp: ControlPlane, args: readonly string[]): Ran => run(HELM, cp, args);

/** Runs and insists on exit 0, with both streams in the failure message. */
export function ok(ran: Ran, what: string): string {
  if (ran.code !== 0) throw new Error(`${what} exited ${ran.code}\n${ran.stderr}${ran.stdout}`);
  return ran.stdout;
}
