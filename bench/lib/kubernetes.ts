/**
 * The policy case with ServiceAccount tokens: a real control plane (the
 * tests' own, test/kube/control-plane.ts) issues the agent a Pod-bound token
 * for toolgate's audience, and toolgate verifies it against the API server's
 * JWKS with TokenReview on, cached as the docs recommend. The token exists
 * only once the cluster is up, so the launcher writes it into the case's
 * request headers before the first load.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startControlPlane, type ControlPlane } from '../../test/kube/control-plane.ts';
import { writeServiceAccountPolicy } from './policy.ts';
import { SEARCH_CALL, type BenchRequest } from './request.ts';
import { alongside, toolgate, type Launcher } from './targets.ts';

const AUDIENCE = 'toolgate.bench/issues';
const NAMESPACE = 'bench';

/** The bench call, its bearer token filled in by the launcher. */
const headers: Record<string, string> = { ...SEARCH_CALL.headers };
export const SERVICE_ACCOUNT_CALL: BenchRequest = { ...SEARCH_CALL, headers };

async function created(cp: ControlPlane, path: string, body: unknown): Promise<any> {
  const r = await cp.api('POST', path, body);
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  return r.body;
}

async function tokenFor(cp: ControlPlane, ns: string, sa: string, spec: Record<string, unknown>): Promise<string> {
  const r = await created(cp, `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec,
  });
  return r.status.token as string;
}

export function toolgateWithServiceAccounts(name: string): Launcher {
  return async (ctx) => {
    const cp = await startControlPlane();
    try {
      await created(cp, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
      for (const sa of ['agent', 'toolgate']) {
        await created(cp, `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          metadata: { name: sa },
        });
      }
      await created(cp, `/api/v1/namespaces/${NAMESPACE}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'agent-0' },
        spec: { serviceAccountName: 'agent', containers: [{ name: 'agent', image: 'registry.example.com/agent:1' }] },
      });
      // The chart's token-review ClusterRole, for the sidecar's ServiceAccount.
      await created(cp, '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'toolgate-token-review' },
        rules: [{ apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] }],
      });
      await created(cp, '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'toolgate-token-review' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'toolgate-token-review' },
        subjects: [{ kind: 'ServiceAccount', namespace: NAMESPACE, name: 'toolgate' }],
      });
      const tokenFile = join(cp.dir, 'sidecar-token');
      writeFileSync(tokenFile, await tokenFor(cp, NAMESPACE, 'toolgate', { expirationSeconds: 7200 }));
      headers.authorization = `Bearer ${await tokenFor(cp, NAMESPACE, 'agent', {
        audiences: [AUDIENCE],
        expirationSeconds: 7200,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'agent-0' },
      })}`;
      const policyFile = writeServiceAccountPolicy(
        [
          '  kubernetes:',
          `    issuer: ${cp.issuer}`,
          `    audience: ${AUDIENCE}`,
          `    apiServer: { url: "${cp.server}", caFile: "${cp.caFile}", tokenFile: "${tokenFile}" }`,
          '    tokenReview: { enabled: true, cacheSeconds: 10 }',
        ],
        NAMESPACE,
      );
      const target = await toolgate(name, { args: ['--policy-file', policyFile] })(ctx);
      return alongside(target, () => cp.stop());
    } catch (err) {
      await cp.stop();
      throw err;
    }
  };
}
