/**
 * Helm against a real API server: install with the defaults and with the
 * options users turn on, a clear failure when an operator's CRDs are absent,
 * upgrades that keep the generated CA, rollback, and an uninstall that leaves
 * no webhook behind to block Pod creation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { helm, kubeSkip, kubectl, ok } from './cli.ts';
import { startControlPlane, type ControlPlane } from './control-plane.ts';
import { crdFiles, type Operator } from './crds.ts';
import { CHART } from './injector.ts';

const WEBHOOK = 'toolgate-injector';

describe('helm against a real API server', { skip: kubeSkip(), timeout: 600_000 }, () => {
  let cp: ControlPlane;
  const install = (release: string, ns: string, values: readonly string[] = []) =>
    helm(cp, ['install', release, CHART, '--namespace', ns, '--create-namespace', ...values]);
  const json = (args: readonly string[]) => JSON.parse(ok(kubectl(cp, [...args, '-o', 'json']), args.join(' ')));
  const webhooks = () => json(['get', 'mutatingwebhookconfigurations']).items.map((w: any) => w.metadata.name);
  const caBundle = (name = WEBHOOK) =>
    json(['get', 'mutatingwebhookconfiguration', name]).webhooks[0].clientConfig.caBundle;
  const installCrds = (operator: Operator) => {
    for (const file of crdFiles(operator)) ok(kubectl(cp, ['apply', '--server-side', '-f', file]), `apply ${file}`);
    ok(kubectl(cp, ['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']), 'CRDs established');
  };

  before(async () => {
    cp = await startControlPlane();
  });
  after(async () => {
    await cp?.stop();
  });

  it('installs with the default values, and the controller manager runs its Deployment', () => {
    ok(install('toolgate', 'toolgate-system'), 'helm install');
    assert.match(ok(helm(cp, ['status', 'toolgate', '-n', 'toolgate-system']), 'helm status'), /STATUS: deployed/);
    assert.ok(webhooks().includes(WEBHOOK));
    const deployment = json(['-n', 'toolgate-system', 'get', 'deployment', WEBHOOK]);
    assert.equal(deployment.spec.template.spec.automountServiceAccountToken, false);
    assert.ok(
      json(['-n', 'toolgate-system', 'get', 'replicasets']).items.some(
        (rs: any) => rs.metadata.ownerReferences?.[0].name === WEBHOOK,
      ),
      'the Deployment was accepted and rolled out as a ReplicaSet',
    );
    assert.equal(
      json(['-n', 'toolgate-system', 'get', 'networkpolicies']).items.length,
      2,
      'the injected pods’ policies, on by default',
    );
  });

  it('keeps the generated CA and serving certificate across upgrades', () => {
    const before = { ca: caBundle(), secret: json(['-n', 'toolgate-system', 'get', 'secret', `${WEBHOOK}-tls`]).data };
    ok(
      helm(cp, ['upgrade', 'toolgate', CHART, '-n', 'toolgate-system', '--set', 'webhook.logLevel=debug']),
      'helm upgrade',
    );
    assert.equal(caBundle(), before.ca);
    assert.deepEqual(json(['-n', 'toolgate-system', 'get', 'secret', `${WEBHOOK}-tls`]).data, before.secret);
  });

  it('rolls back to an earlier revision', () => {
    ok(
      helm(cp, ['upgrade', 'toolgate', CHART, '-n', 'toolgate-system', '--set', 'webhook.replicas=3']),
      'helm upgrade',
    );
    assert.equal(json(['-n', 'toolgate-system', 'get', 'deployment', WEBHOOK]).spec.replicas, 3);
    ok(helm(cp, ['rollback', 'toolgate', '1', '-n', 'toolgate-system']), 'helm rollback');
    assert.equal(json(['-n', 'toolgate-system', 'get', 'deployment', WEBHOOK]).spec.replicas, 2);
    const history = JSON.parse(
      ok(helm(cp, ['history', 'toolgate', '-n', 'toolgate-system', '-o', 'json']), 'helm history'),
    );
    assert.equal(history.at(-1).status, 'deployed');
    assert.match(history.at(-1).description, /Rollback to 1/);
  });

  it('installs with the options users turn on: approvals with a Service and Ingress, the webhook’s NetworkPolicy, dashboards', () => {
    ok(
      install('options', 'options-system', [
        '--set',
        'approvals.enabled=true',
        '--set',
        'approvals.publicUrl=https://approve.example.com',
        '--set',
        'approvals.service.enabled=true',
        '--set',
        'approvals.service.selector.app=tickets',
        '--set',
        'approvals.ingress.enabled=true',
        '--set',
        'approvals.ingress.host=approve.example.com',
        '--set',
        'networkPolicy.webhook.enabled=true',
        '--set',
        'metrics.dashboards.enabled=true',
        '--set',
        'webhook.failurePolicy=Ignore',
      ]),
      'helm install with options',
    );
    assert.equal(
      json(['-n', 'options-system', 'get', 'ingress', 'options-toolgate-approvals']).spec.rules[0].host,
      'approve.example.com',
    );
    assert.equal(json(['-n', 'options-system', 'get', 'networkpolicies']).items.length, 3);
    assert.ok(
      json(['-n', 'options-system', 'get', 'configmaps']).items.some(
        (c: any) => c.metadata.labels?.grafana_dashboard === '1',
      ),
    );
    ok(helm(cp, ['uninstall', 'options', '-n', 'options-system', '--wait']), 'helm uninstall');
  });

  it('without the operators’ CRDs, fails before it changes anything and names the value to change', () => {
    const cases: [string[], RegExp][] = [
      [
        ['--set', 'metrics.podMonitor.enabled=true'],
        /does not serve monitoring\.coreos\.com\/v1\/PodMonitor: install the prometheus-operator CRDs first, or set metrics\.podMonitor\.enabled=false/,
      ],
      [
        ['--set', 'metrics.serviceMonitor.enabled=true'],
        /ServiceMonitor: .* or set metrics\.serviceMonitor\.enabled=false/,
      ],
      [
        ['--set', 'metrics.prometheusRule.enabled=true'],
        /PrometheusRule: .* or set metrics\.prometheusRule\.enabled=false/,
      ],
      [
        ['--set', 'certificates.mode=certManager'],
        /does not serve cert-manager\.io\/v1\/Certificate: install the cert-manager CRDs first, or set certificates\.mode=helm/,
      ],
    ];
    for (const [values, message] of cases) {
      const before = caBundle();
      const upgrade = helm(cp, ['upgrade', 'toolgate', CHART, '-n', 'toolgate-system', ...values]);
      assert.notEqual(upgrade.code, 0, values.join(' '));
      assert.match(upgrade.stderr, message);
      const fresh = install('fresh', 'fresh-system', values);
      assert.notEqual(fresh.code, 0);
      assert.match(fresh.stderr, message);
      assert.equal(caBundle(), before, 'the installed release is untouched');
      assert.ok(!webhooks().includes('fresh-toolgate-injector'), 'a failed install leaves no webhook');
    }
  });

  it('with the CRDs installed, the API server accepts the monitoring and cert-manager objects against their real schemas', () => {
    installCrds('prometheus-operator');
    installCrds('cert-manager');
    ok(kubectl(cp, ['create', 'namespace', 'tickets']), 'namespace');
    ok(kubectl(cp, ['create', 'namespace', 'search']), 'namespace');
    ok(
      helm(cp, [
        'upgrade',
        'toolgate',
        CHART,
        '-n',
        'toolgate-system',
        '-f',
        `${CHART}/examples/cert-manager-sentinel.yaml`,
        '--set',
        'metrics.podMonitor.enabled=true',
        '--set',
        'metrics.serviceMonitor.enabled=true',
        '--set',
        'metrics.prometheusRule.enabled=true',
      ]),
      'helm upgrade',
    );
    assert.equal(json(['-n', 'toolgate-system', 'get', 'podmonitors']).items.length, 2);
    assert.equal(json(['-n', 'toolgate-system', 'get', 'prometheusrules']).items.length, 1);
    const certificate = json(['-n', 'toolgate-system', 'get', 'certificate', WEBHOOK]);
    assert.equal(certificate.spec.secretName, `${WEBHOOK}-tls`);
    const webhook = json(['get', 'mutatingwebhookconfiguration', WEBHOOK]);
    assert.equal(webhook.metadata.annotations['cert-manager.io/inject-ca-from'], `toolgate-system/${WEBHOOK}`);
  });

  it('uninstalls without leaving a webhook that would block Pod creation', () => {
    ok(helm(cp, ['uninstall', 'toolgate', '-n', 'toolgate-system', '--wait']), 'helm uninstall');
    assert.deepEqual(
      webhooks().filter((w: string) => w.includes('toolgate')),
      [],
    );
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'after-uninstall', namespace: 'default', labels: { 'toolgate.dev/inject': 'true' } },
      spec: { containers: [{ name: 'app', image: 'x', ports: [{ name: 'mcp', containerPort: 3000 }] }] },
    };
    const created = kubectl(cp, ['create', '-f', '-'], JSON.stringify(pod));
    assert.equal(created.code, 0, created.stderr);
  });
});
