/**
 * The rest of what a cluster decides: policy ConfigMaps as the API server
 * stores them, checked by `toolgate policy validate` byte for byte; the
 * permissions of every ServiceAccount the chart creates, against a fresh
 * ServiceAccount's; and deploy/ applied with a server-side dry run.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { helm, kubeSkip, kubectl, ok } from './cli.ts';
import { startControlPlane, type ControlPlane } from './control-plane.ts';
import { crdFiles } from './crds.ts';
import { deployKustomizations } from '../unit/chart/chart-files.ts';
import { CHART } from './injector.ts';

const REPO = join(import.meta.dirname, '../..');
const CLI = join(REPO, 'src/cli.ts');

function validate(file: string): { code: number; out: string } {
  const r = spawnSync(process.execPath, [CLI, 'policy', 'validate', file], { encoding: 'utf8' });
  return { code: r.status ?? 1, out: `${r.stdout}${r.stderr}` };
}

/** `kubectl auth can-i --list` as a table: one `verbs resources nonResourceURLs resourceNames` row per rule. */
function canI(cp: ControlPlane, user: string, ns: string): string[] {
  const out = ok(kubectl(cp, ['auth', 'can-i', '--list', `--as=${user}`, '-n', ns]), `can-i for ${user}`);
  return out
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.trim().split(/\s+/).join(' '))
    .sort();
}

describe('cluster objects through a real API server', { skip: kubeSkip(), timeout: 600_000 }, () => {
  let cp: ControlPlane;
  before(async () => {
    cp = await startControlPlane();
  });
  after(async () => {
    await cp?.stop();
  });

  it('validates a policy ConfigMap as the API server stored it, after create and after update', () => {
    const stored = () =>
      ok(
        kubectl(cp, ['-n', 'default', 'get', 'configmap', 'tickets-policy', '-o', 'jsonpath={.data.policy\\.yaml}']),
        'read ConfigMap',
      );
    const file = join(cp.dir, 'stored-policy.yaml');
    const original = readFileSync(join(REPO, 'examples/policy.yaml'), 'utf8');
    ok(
      kubectl(cp, [
        '-n',
        'default',
        'create',
        'configmap',
        'tickets-policy',
        `--from-file=policy.yaml=${join(REPO, 'examples/policy.yaml')}`,
      ]),
      'create ConfigMap',
    );
    writeFileSync(file, stored());
    assert.equal(readFileSync(file, 'utf8'), original, 'the API server stores the file byte for byte');
    const good = validate(file);
    assert.equal(good.code, 0, good.out);

    // An update through the API server that breaks the policy: what the server now holds fails validation.
    const broken = original.replace(/^grants:/m, 'grantz:');
    assert.notEqual(broken, original);
    const manifest = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'tickets-policy', namespace: 'default' },
      data: { 'policy.yaml': broken },
    };
    ok(
      kubectl(cp, ['apply', '--server-side', '--force-conflicts', '-f', '-'], JSON.stringify(manifest)),
      'update ConfigMap',
    );
    writeFileSync(file, stored());
    assert.equal(readFileSync(file, 'utf8'), broken);
    const bad = validate(file);
    assert.notEqual(bad.code, 0);
    assert.match(bad.out, /grantz/);
  });

  it('gives every ServiceAccount the chart creates no permission beyond a fresh ServiceAccount’s', () => {
    ok(
      helm(cp, [
        'install',
        'toolgate',
        CHART,
        '--namespace',
        'toolgate-system',
        '--create-namespace',
        '--set',
        'approvals.enabled=true',
        '--set',
        'networkPolicy.webhook.enabled=true',
      ]),
      'helm install',
    );
    const manifest = ok(helm(cp, ['get', 'manifest', 'toolgate', '-n', 'toolgate-system']), 'helm get manifest');
    const accounts = [...manifest.matchAll(/^kind: ServiceAccount\nmetadata:\n {2}name: (\S+)/gm)].map((m) => m[1]);
    assert.deepEqual(accounts, ['toolgate-injector']);
    assert.doesNotMatch(manifest, /^kind: (Cluster)?Role(Binding)?$/m, 'the chart grants no role');
    ok(kubectl(cp, ['-n', 'toolgate-system', 'create', 'serviceaccount', 'baseline']), 'baseline ServiceAccount');
    const baseline = canI(cp, 'system:serviceaccount:toolgate-system:baseline', 'toolgate-system');
    assert.ok(
      baseline.some((r) => r.startsWith('selfsubjectaccessreviews.authorization.k8s.io')),
      'the list is the real one',
    );
    for (const account of accounts) {
      assert.deepEqual(
        canI(cp, `system:serviceaccount:toolgate-system:${account}`, 'toolgate-system'),
        baseline,
        account,
      );
    }
    // The injector needs none: it answers from what each AdmissionReview carries (test/kube/admission.test.ts runs it with no credential at all).
    const pods = JSON.parse(ok(kubectl(cp, ['-n', 'toolgate-system', 'get', 'pods', '-o', 'json']), 'pods')).items;
    assert.ok(pods.length > 0);
    for (const pod of pods) {
      assert.equal(pod.spec.automountServiceAccountToken, false);
      assert.ok(
        !pod.spec.volumes.some((v: any) => v.projected?.sources?.some((s: any) => s.serviceAccountToken)),
        'no token is mounted',
      );
    }
    // With TokenReview on, the named ServiceAccount gains exactly tokenreviews create.
    ok(kubectl(cp, ['create', 'namespace', 'tickets']), 'namespace');
    ok(kubectl(cp, ['-n', 'tickets', 'create', 'serviceaccount', 'tickets-mcp']), 'ServiceAccount');
    ok(
      helm(cp, [
        'upgrade',
        'toolgate',
        CHART,
        '-n',
        'toolgate-system',
        '--reuse-values',
        '-f',
        join(CHART, 'examples/serviceaccount-tokens.yaml'),
      ]),
      'helm upgrade',
    );
    const reviewer = canI(cp, 'system:serviceaccount:tickets:tickets-mcp', 'tickets');
    assert.deepEqual(
      reviewer.filter((r) => !baseline.includes(r)),
      ['tokenreviews.authentication.k8s.io [] [] [create]'],
    );
    assert.deepEqual(
      canI(cp, 'system:serviceaccount:toolgate-system:toolgate-injector', 'toolgate-system'),
      baseline,
      'the injector still holds nothing',
    );
    ok(helm(cp, ['uninstall', 'toolgate', '-n', 'toolgate-system', '--wait']), 'helm uninstall');
  });

  it('applies every kustomization under deploy/ with a server-side dry run', () => {
    for (const file of crdFiles('cert-manager'))
      ok(kubectl(cp, ['apply', '--server-side', '-f', file]), `apply ${file}`);
    ok(kubectl(cp, ['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']), 'CRDs established');
    for (const dir of deployKustomizations()) {
      // A dry run creates no namespace, so the objects inside one need it to exist first.
      const rendered = ok(kubectl(cp, ['kustomize', dir]), `kustomize ${dir}`);
      for (const ns of new Set(
        [...rendered.matchAll(/^kind: Namespace\nmetadata:\n(?: {2}\S.*\n)*? {2}name: (\S+)/gm)].map(
          (m) => m[1] as string,
        ),
      )) {
        kubectl(cp, ['create', 'namespace', ns]);
      }
      const ran = kubectl(cp, ['apply', '--server-side', '--dry-run=server', '-k', dir]);
      assert.equal(ran.code, 0, `${relative(REPO, dir)}: ${ran.stderr}`);
      assert.match(
        ran.stdout,
        /mutatingwebhookconfiguration\.admissionregistration\.k8s\.io\/toolgate-injector serverside-applied \(server dry run\)/,
      );
      assert.match(ran.stdout, /networkpolicy\.networking\.k8s\.io\/toolgate-injector serverside-applied/);
    }
  });
});
