/**
 * Admission through the real path: a real kube-apiserver calls the injector,
 * run on the host behind the chart's webhook configuration (webhook.url) with
 * the chart's certificate, and stores what comes back only if its own
 * validation accepts the patched Pod. The controller manager turns
 * Deployments into ReplicaSets and generateName Pods, as in production.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { parseInjectorConfig } from '../../src/inject/config.ts';
import { isPortName } from '../../src/inject/k8s.ts';
import { waitFor } from '../helpers/wait.ts';
import { frontProblems, respond, sidecarOf } from '../unit/inject/admission.ts';
import { DENIED } from '../unit/inject/cases.ts';
import { readReview } from '../unit/inject/fixtures.ts';
import { pod as generatedPod, review } from '../unit/inject/generated-pods.ts';
import { helm, kubeSkip, kubectl, ok } from './cli.ts';
import { startControlPlane, type ControlPlane } from './control-plane.ts';
import { CHART, installWithHostInjector, RELEASE_NAMESPACE, type HostInjector } from './injector.ts';
import { MESH_CONTAINER, startMeshWebhook } from './mesh-webhook.ts';

const NS = 'apps';
/**
 * kubectl prints a webhook's Invalid status from its details, one line per cause; the
 * status message itself (what Deployment events show) is the same text behind
 * `admission webhook "inject.toolgate.dev" denied the request: `.
 */
const printedRefusal = (name: string, field: string) => `The pods "${name}" is invalid: ${field}: toolgate: `;
/** Refusals the API server makes itself, before any webhook: the object does not decode as a Pod. */
const DECODE_ERRORS = new Set(['containers that are not a list']);
/**
 * The API server decodes and defaults a Pod before webhooks see it, so a Pod without a spec
 * arrives with an empty one: the injector then refuses the containers it cannot read.
 */
const AS_DECODED: Readonly<Record<string, readonly [string, RegExp]>> = {
  'no spec': ['spec.containers', /cannot read spec\.containers/],
};

/** A fixture's Pod as a user would create it: named, in the test namespace, owned by nobody. */
function fixturePod(fixture: string, name: string): { pod: any; request: any } {
  const body = readReview(fixture);
  const pod = body.request.object;
  delete pod.metadata.generateName;
  delete pod.metadata.ownerReferences;
  pod.metadata.name = name;
  pod.metadata.namespace = NS;
  return { pod, request: body.request };
}

describe('admission through a real API server', { skip: kubeSkip(), timeout: 600_000 }, () => {
  let cp: ControlPlane;
  let injector: HostInjector;
  let seq = 0;
  const uniqueName = (what: string) =>
    `${what
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 40)}-${seq++}`;
  const create = (pod: unknown) => kubectl(cp, ['create', '-f', '-', '-o', 'json'], JSON.stringify(pod));
  const storedPod = (name: string, ns = NS) =>
    JSON.parse(ok(kubectl(cp, ['-n', ns, 'get', 'pod', name, '-o', 'json']), `get pod ${name}`));

  before(async () => {
    cp = await startControlPlane();
    injector = await installWithHostInjector(cp);
    ok(kubectl(cp, ['create', 'namespace', NS]), 'create namespace');
    ok(
      kubectl(cp, ['-n', NS, 'create', 'configmap', 'tickets-policy', '--from-literal=policy.yaml=grants: []']),
      'create policy',
    );
  });
  after(async () => {
    await injector?.close();
    await cp?.stop();
  });

  it('stores an opted-in Pod with toolgate in front, as the API server validated it', () => {
    const { pod } = fixturePod('deployment-pod', 'tickets');
    const ran = create(pod);
    assert.equal(ran.code, 0, ran.stderr);
    const stored = storedPod('tickets');
    assert.deepEqual(frontProblems(stored, 'mcp'), []);
    const sidecar = sidecarOf(stored);
    assert.equal(
      stored.spec.initContainers.at(-1).name,
      'toolgate',
      'a native sidecar, last among the init containers',
    );
    assert.equal(sidecar.restartPolicy, 'Always');
    assert.equal(stored.metadata.labels['toolgate.dev/injected'], 'true');
    assert.equal(stored.metadata.annotations['toolgate.dev/status'], 'injected');
    const app = stored.spec.containers[0];
    assert.equal(app.ports.find((p: any) => p.containerPort === 3000).name, 'mcp-upstream');
    assert.equal(app.readinessProbe.httpGet.port, 'mcp-upstream', 'the app’s probe still checks the app');
  });

  it('injects the generateName Pods a Deployment’s ReplicaSet creates', async () => {
    const { pod } = fixturePod('deployment-pod', 'unused');
    const labels = { 'app.kubernetes.io/name': 'tickets-deploy', 'toolgate.dev/inject': 'true' };
    const template = {
      metadata: { labels, annotations: pod.metadata.annotations },
      spec: { ...pod.spec, volumes: undefined },
    };
    template.spec.containers = template.spec.containers.map((c: any) => ({ ...c, volumeMounts: undefined }));
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'tickets-deploy', namespace: NS },
      spec: { replicas: 2, selector: { matchLabels: { 'app.kubernetes.io/name': 'tickets-deploy' } }, template },
    };
    ok(kubectl(cp, ['create', '-f', '-'], JSON.stringify(deployment)), 'create deployment');
    let pods: any[] = [];
    await waitFor(
      () => {
        pods = JSON.parse(
          ok(
            kubectl(cp, ['-n', NS, 'get', 'pods', '-l', 'app.kubernetes.io/name=tickets-deploy', '-o', 'json']),
            'list pods',
          ),
        ).items;
        return pods.length === 2;
      },
      'two pods from the ReplicaSet',
      60_000,
    );
    for (const p of pods) {
      assert.match(p.metadata.name, /^tickets-deploy-[a-z0-9]+-[a-z0-9]{5}$/, 'named by generateName');
      assert.equal(p.metadata.ownerReferences[0].kind, 'ReplicaSet');
      assert.deepEqual(frontProblems(p, 'mcp'), []);
    }
  });

  it('is called again after a later webhook adds a container (reinvocationPolicy IfNeeded), and stays in front', async () => {
    const mesh = await startMeshWebhook();
    try {
      ok(kubectl(cp, ['apply', '-f', '-'], JSON.stringify(mesh.configuration)), 'register the mesh webhook');
      const { pod } = fixturePod('deployment-pod', 'with-mesh');
      // Through the API rather than kubectl: the mesh webhook is served by this process, which kubectl's spawnSync would block.
      const created = await cp.api('POST', `/api/v1/namespaces/${NS}/pods`, pod);
      assert.equal(created.status, 201, created.body.message);
      const stored = storedPod('with-mesh');
      assert.deepEqual(
        stored.spec.containers.map((c: any) => c.name),
        ['server', MESH_CONTAINER],
      );
      assert.deepEqual(frontProblems(stored, 'mcp'), []);
      const event = readFileSync(cp.auditLog, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"with-mesh"') && l.includes('ResponseComplete'))
        .map((l) => JSON.parse(l))[0];
      const rounds = Object.keys(event.annotations).filter((k) =>
        k.startsWith('mutation.webhook.admission.k8s.io/round_'),
      );
      const calls = rounds
        .map((k) => JSON.parse(event.annotations[k]))
        .filter((a) => a.webhook === 'inject.toolgate.dev');
      assert.equal(calls.length, 2, 'the injector was called twice');
      assert.deepEqual(
        calls.map((a) => a.mutated),
        [true, false],
        'and the second call changed nothing',
      );
    } finally {
      kubectl(cp, ['delete', 'mutatingwebhookconfiguration', 'zz-mesh']);
      await mesh.close();
    }
  });

  it('answers a server-side dry run (sideEffects: None) with the injected Pod and stores nothing', () => {
    const { pod } = fixturePod('deployment-pod', 'dry-run');
    const ran = kubectl(cp, ['create', '--dry-run=server', '-f', '-', '-o', 'json'], JSON.stringify(pod));
    assert.equal(ran.code, 0, ran.stderr);
    assert.deepEqual(frontProblems(JSON.parse(ran.stdout), 'mcp'), []);
    assert.notEqual(kubectl(cp, ['-n', NS, 'get', 'pod', 'dry-run']).code, 0, 'nothing stored');
  });

  it('leaves Pods that did not opt in, and opted-in Pods in namespaces outside the selector, untouched', () => {
    const { pod } = fixturePod('deployment-pod', 'plain-app');
    pod.metadata.labels['toolgate.dev/inject'] = 'false';
    delete pod.metadata.annotations;
    assert.equal(create(pod).code, 0);
    assert.equal(sidecarOf(storedPod('plain-app')), undefined);
    assert.equal(storedPod('plain-app').metadata.labels['toolgate.dev/injected'], undefined);

    const { pod: system } = fixturePod('deployment-pod', 'in-kube-system');
    system.metadata.namespace = 'kube-system';
    assert.equal(create(system).code, 0, 'kube-system is outside webhook.namespaceSelector');
    assert.equal(sidecarOf(storedPod('in-kube-system', 'kube-system')), undefined);
  });

  it('brings every refusal to kubectl as the injector’s own message, and records it in the audit log', () => {
    const rows: string[] = ['| case | what kubectl printed |', '|---|---|'];
    const wrong: string[] = [];
    for (const [what, fixture, edit, givenField, givenMessage] of DENIED) {
      const [field, message] = AS_DECODED[what] ?? [givenField, givenMessage];
      const name = uniqueName(what);
      const { pod, request } = fixturePod(fixture, name);
      edit(pod, request);
      if (pod.metadata !== undefined) Object.assign(pod.metadata, { name, namespace: NS });
      const ran = create(pod);
      const printed = ran.stderr.trim();
      rows.push(`| ${what} | \`${printed.replaceAll('|', '\\|')}\` |`);
      const expected = DECODE_ERRORS.has(what)
        ? ran.code !== 0 && !printed.includes('inject.toolgate.dev')
        : ran.code !== 0 &&
          printed.startsWith(printedRefusal(name, field)) &&
          message.test(printed) &&
          readFileSync(cp.auditLog, 'utf8')
            .split('\n')
            .some(
              (l) =>
                l.includes(name) && l.includes(`"inject.toolgate.dev/injection":${JSON.stringify(`denied: ${field}`)}`),
            );
      if (!expected) wrong.push(`${what}: ${printed}`);
      assert.doesNotMatch(
        printed,
        /rm -rf|Tickets_Policy|UPPER|MCP_PORT|lots/,
        `${what}: annotation values are never echoed`,
      );
    }
    mkdirSync(join(import.meta.dirname, '../../test-output'), { recursive: true });
    writeFileSync(join(import.meta.dirname, '../../test-output/kube-refusals.md'), `${rows.join('\n')}\n`);
    assert.deepEqual(
      wrong,
      [],
      'each refusal reaches kubectl as the injector’s message, with its field, and is audited',
    );
  });

  it('over generated opted-in Pods, stores none without toolgate in front and accepts every valid Pod it patches', async () => {
    const parsed = parseInjectorConfig(readFileSync(injector.configFile, 'utf8'));
    assert.ok(parsed.ok);
    const counts = { stored: 0, denied: 0, invalid: 0 };
    await fc.assert(
      fc.asyncProperty(generatedPod, async (generated) => {
        const name = uniqueName('generated');
        const local = respond(review(generated), parsed.config);
        const res = await cp.api('POST', `/api/v1/namespaces/${NS}/pods`, {
          apiVersion: 'v1',
          kind: 'Pod',
          ...generated,
          metadata: { ...generated.metadata, name },
        });
        const named = generated.metadata.annotations['toolgate.dev/port-name'];
        const portName = named !== undefined && isPortName(named) ? named : 'mcp';
        if (res.status === 201) {
          counts.stored++;
          assert.ok(local.allowed, 'the injector on the host decides as the one in the tests');
          assert.deepEqual(frontProblems(res.body, portName), [], 'stored only with toolgate in front');
          return;
        }
        const message: string = res.body.message ?? '';
        if (message.includes('denied the request: toolgate: ')) {
          counts.denied++;
          assert.equal(local.allowed, false);
          assert.ok(message.endsWith(local.status?.message ?? '\0'), 'the injector’s message reaches the client whole');
          return;
        }
        counts.invalid++;
        assert.equal(res.status, 422, message);
        // The API server itself is the oracle: the same Pod not opted in (so no webhook is called) must be refused too.
        const bare = {
          apiVersion: 'v1',
          kind: 'Pod',
          ...generated,
          metadata: { ...generated.metadata, name, labels: { 'toolgate.dev/inject': 'false' } },
        };
        const dryRun = await cp.api('POST', `/api/v1/namespaces/${NS}/pods?dryRun=All`, bare);
        assert.notEqual(
          dryRun.status,
          201,
          `the API server refused the patched Pod but accepts it unpatched: ${message}`,
        );
      }),
      { numRuns: 120 },
    );
    assert.ok(counts.stored > 10 && counts.denied > 10, `both answers reached (${JSON.stringify(counts)})`);
  });

  it('patches plain sidecars into Pods the API server accepts', async () => {
    const plain = join(cp.dir, 'injector-plain.yaml');
    writeFileSync(
      plain,
      readFileSync(injector.configFile, 'utf8').replace(/^sidecarMode: native$/m, 'sidecarMode: plain'),
    );
    assert.notEqual(readFileSync(plain, 'utf8'), readFileSync(injector.configFile, 'utf8'));
    await injector.start(plain);
    try {
      const { pod } = fixturePod('deployment-pod', 'plain-sidecar');
      const ran = create(pod);
      assert.equal(ran.code, 0, ran.stderr);
      const stored = storedPod('plain-sidecar');
      assert.equal(stored.spec.containers.at(-1).name, 'toolgate');
      assert.deepEqual(frontProblems(stored, 'mcp'), []);
      const job = fixturePod('deployment-pod', 'plain-job').pod;
      job.spec.restartPolicy = 'Never';
      const refused = create(job);
      assert.ok(refused.stderr.startsWith(printedRefusal('plain-job', 'spec.restartPolicy')), refused.stderr);
      assert.match(refused.stderr, /runs to completion/);
    } finally {
      await injector.start();
    }
  });

  it('with the injector down, refuses opted-in Pods under failurePolicy Fail and admits them bare under Ignore', async () => {
    await injector.stop();
    const { pod } = fixturePod('deployment-pod', 'while-down');
    const refused = create(pod);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /failed calling webhook "inject\.toolgate\.dev".*connect: connection refused/);
    const { pod: other } = fixturePod('deployment-pod', 'unlabelled-while-down');
    delete other.metadata.labels['toolgate.dev/inject'];
    assert.equal(create(other).code, 0, 'pods that did not opt in never wait on the webhook');

    // A webhook that takes the connection and never answers: the API server gives up after timeoutSeconds.
    ok(
      helm(cp, [
        'upgrade',
        'toolgate',
        CHART,
        '-n',
        RELEASE_NAMESPACE,
        '--reuse-values',
        '--set',
        'webhook.timeoutSeconds=1',
      ]),
      'helm upgrade',
    );
    const silent = createServer(() => {}).listen(injector.port, '127.0.0.1');
    await once(silent, 'listening');
    try {
      const timedOut = create(fixturePod('deployment-pod', 'while-silent').pod);
      assert.notEqual(timedOut.code, 0);
      assert.match(
        timedOut.stderr,
        /failed calling webhook "inject\.toolgate\.dev".*\/mutate\?timeout=1s".*(context deadline exceeded|Client\.Timeout)/,
        'the API server asks with the chart’s timeoutSeconds and gives up after it',
      );
    } finally {
      silent.close();
    }

    ok(
      helm(cp, [
        'upgrade',
        'toolgate',
        CHART,
        '-n',
        RELEASE_NAMESPACE,
        '--reuse-values',
        '--set',
        'webhook.failurePolicy=Ignore',
      ]),
      'helm upgrade',
    );
    const admitted = create(pod);
    assert.equal(admitted.code, 0, admitted.stderr);
    assert.equal(sidecarOf(storedPod('while-down')), undefined, 'Ignore: created without toolgate, as the docs warn');
    ok(
      helm(cp, [
        'upgrade',
        'toolgate',
        CHART,
        '-n',
        RELEASE_NAMESPACE,
        '--reuse-values',
        '--set',
        'webhook.failurePolicy=Fail',
      ]),
      'helm upgrade',
    );
    await injector.start();
  });
});
