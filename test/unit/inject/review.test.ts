import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { review } from '../../../src/inject/review.ts';
import type { AdmissionResponse } from '../../../src/inject/review.ts';
import { SECURITY_CONTEXT } from '../../../src/inject/sidecar.ts';
import { applyPatch } from './json-patch.ts';
import type { Operation } from './json-patch.ts';
import { assertGolden, fixtureConfig, readReview } from './fixtures.ts';

const config = fixtureConfig();

function respond(body: unknown): AdmissionResponse {
  const result = review(body, config);
  assert.ok(result.ok, 'the review is answered');
  assert.equal(result.review.apiVersion, 'admission.k8s.io/v1');
  assert.equal(result.review.kind, 'AdmissionReview');
  assert.equal(result.review.response.allowed, true);
  return result.review.response;
}

function patchOf(response: AdmissionResponse): Operation[] {
  assert.equal(response.patchType, 'JSONPatch');
  return JSON.parse(Buffer.from(response.patch as string, 'base64').toString('utf8'));
}

function inject(name: string): { patch: Operation[]; pod: any; response: AdmissionResponse; body: Record<string, any> } {
  const body = readReview(name);
  const response = respond(body);
  assert.equal(response.uid, body.request.uid);
  const patch = patchOf(response);
  const applied = applyPatch(body.request.object, patch);
  assert.ok(applied.ok, applied.ok ? '' : applied.reason);
  return { patch, pod: applied.doc, response, body };
}

function withPod(name: string, edit: (pod: any, request: any) => void): Record<string, any> {
  const body = readReview(name);
  edit(body.request.object, body.request);
  return body;
}

function assertUnchanged(response: AdmissionResponse, warning: RegExp | undefined): void {
  assert.equal(response.patch, undefined);
  assert.equal(response.patchType, undefined);
  assert.match(response.auditAnnotations?.injection ?? '', /^skipped: /);
  if (warning === undefined) assert.equal(response.warnings, undefined);
  else {
    assert.equal(response.warnings?.length, 1);
    assert.match(response.warnings?.[0] ?? '', warning);
  }
}

const sidecarOf = (pod: any) => pod.spec.containers.find((c: any) => c.name === 'toolgate');
const envOf = (container: any) => Object.fromEntries(container.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));

describe('injecting a pod from a Deployment (named port, probes on it, policy and keys)', () => {
  const { patch, pod, response } = inject('deployment-pod');

  it('matches the golden patch and the golden pod', () => {
    assertGolden('deployment-pod.patch.json', patch);
    assertGolden('deployment-pod.expected-pod.json', pod);
  });
  it('moves the name mcp to toolgate and keeps the app on its number as mcp-upstream', () => {
    const app = pod.spec.containers[0];
    assert.deepEqual(app.ports[0], { name: 'mcp-upstream', containerPort: 3000, protocol: 'TCP' });
    assert.equal(app.readinessProbe.httpGet.port, 'mcp-upstream');
    assert.equal(app.livenessProbe.tcpSocket.port, 'mcp-upstream');
    const sidecar = sidecarOf(pod);
    assert.deepEqual(sidecar.ports[0], { name: 'mcp', containerPort: 8080, protocol: 'TCP' });
    assert.equal(envOf(sidecar).TOOLGATE_UPSTREAM, 'http://127.0.0.1:3000');
    assert.equal(envOf(sidecar).TOOLGATE_PORT, '8080');
  });
  it('mounts the policy ConfigMap and key Secret read-only and points TOOLGATE_POLICY_FILE into them', () => {
    const sidecar = sidecarOf(pod);
    assert.equal(envOf(sidecar).TOOLGATE_POLICY_FILE, '/etc/toolgate/policy/policy.yaml');
    assert.ok(sidecar.volumeMounts.every((m: any) => m.readOnly === true));
    const volumes = Object.fromEntries(pod.spec.volumes.map((v: any) => [v.name, v]));
    assert.deepEqual(volumes['toolgate-policy'].configMap, { name: 'tickets-policy' });
    assert.deepEqual(volumes['toolgate-keys'].secret, { secretName: 'tickets-agent-keys' });
    assert.ok(volumes['kube-api-access-8xk2p'], 'existing volumes are kept');
  });
  it('probes the admin port and hardens the container', () => {
    const sidecar = sidecarOf(pod);
    assert.equal(sidecar.livenessProbe.httpGet.path, '/healthz');
    assert.equal(sidecar.readinessProbe.httpGet.path, '/readyz');
    assert.equal(sidecar.readinessProbe.httpGet.port, 'toolgate-admin');
    assert.deepEqual(sidecar.securityContext, SECURITY_CONTEXT);
    assert.equal(sidecar.securityContext.runAsNonRoot, true);
    assert.equal(sidecar.securityContext.readOnlyRootFilesystem, true);
    assert.equal(sidecar.securityContext.allowPrivilegeEscalation, false);
    assert.deepEqual(sidecar.securityContext.capabilities, { drop: ['ALL'] });
    assert.deepEqual(sidecar.resources, { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } });
  });
  it('passes the configured extra env (Redis) after its own variables', () => {
    const names = sidecarOf(pod).env.map((e: any) => e.name);
    assert.deepEqual(names.slice(-3), ['TOOLGATE_REDIS_MODE', 'TOOLGATE_REDIS_URL', 'TOOLGATE_REDIS_PASSWORD']);
    assert.equal(envOf(sidecarOf(pod)).TOOLGATE_LOG_LEVEL, 'debug');
  });
  it('marks the pod and says nothing to warn about', () => {
    assert.equal(pod.metadata.annotations['toolgate.dev/status'], 'injected');
    assert.equal(response.warnings, undefined);
    assert.deepEqual(response.auditAnnotations, { injection: 'injected' });
  });
  it('changes nothing on a second injection', () => {
    const again = readReview('deployment-pod');
    again.request.object = pod;
    const second = respond(again);
    assertUnchanged(second, undefined);
    assert.equal(second.auditAnnotations?.injection, 'skipped: toolgate is already injected');
  });
});

describe('injecting a pod whose Service targets a port number (no named port)', () => {
  const { patch, pod } = inject('numeric-port');

  it('matches the golden patch and pod', () => {
    assertGolden('numeric-port.patch.json', patch);
    assertGolden('numeric-port.expected-pod.json', pod);
  });
  it('forwards to the annotated port, creates the volume list, and applies path, key and resource overrides', () => {
    assert.equal(pod.spec.containers[0].ports, undefined, 'the app container is not touched');
    const sidecar = sidecarOf(pod);
    const env = envOf(sidecar);
    assert.equal(env.TOOLGATE_UPSTREAM, 'http://127.0.0.1:8000');
    assert.equal(env.TOOLGATE_POLICY_FILE, '/etc/toolgate/policy/search.yaml');
    assert.equal(env.TOOLGATE_MCP_PATH, '/v1/mcp');
    assert.deepEqual(sidecar.resources.limits, { memory: '512Mi' });
    assert.deepEqual(pod.spec.volumes, [{ name: 'toolgate-policy', configMap: { name: 'search-policy' } }]);
    assert.ok(patch.some((op) => op.op === 'add' && op.path === '/spec/volumes'));
  });
});

describe('injecting a bare pod without annotations or policy', () => {
  const { patch, pod, response } = inject('bare-pod');

  it('matches the golden patch and pod', () => {
    assertGolden('bare-pod.patch.json', patch);
    assertGolden('bare-pod.expected-pod.json', pod);
  });
  it('creates the annotation map and warns that no policy is enforced', () => {
    assert.deepEqual(pod.metadata.annotations, { 'toolgate.dev/status': 'injected' });
    assert.equal(sidecarOf(pod).volumeMounts, undefined);
    assert.deepEqual(response.warnings, ['toolgate: no toolgate.dev/policy-configmap: toolgate forwards every request without enforcing policy']);
  });
});

describe('pods that are not injected are admitted unchanged', () => {
  const cases: [string, (pod: any, request: any) => void, RegExp | undefined][] = [
    ['no opt-in', (pod) => { delete pod.metadata.labels['toolgate.dev/inject']; }, undefined],
    ['opt-in label but opt-out annotation', (pod) => { pod.metadata.annotations['toolgate.dev/inject'] = 'false'; }, undefined],
    ['opt-out label', (pod) => { pod.metadata.labels['toolgate.dev/inject'] = 'false'; }, undefined],
    ['an inject value that is neither true nor false', (pod) => { pod.metadata.labels['toolgate.dev/inject'] = 'yes'; }, /must be "true" or "false"/],
    ['two ports named mcp', (pod) => { pod.spec.containers.push({ name: 'other', image: 'x', ports: [{ name: 'mcp', containerPort: 4000 }] }); }, /more than one container port is named mcp/],
    ['the app already listening on 8080', (pod) => { pod.spec.containers[0].ports[1].containerPort = 8080; }, /port 8080 is already used.*toolgate.dev\/proxy-port/],
    ['an upstream-port that disagrees with the named port', (pod) => { pod.metadata.annotations['toolgate.dev/upstream-port'] = '3001'; }, /upstream-port disagrees/],
    ['an unparsable port annotation', (pod) => { pod.metadata.annotations['toolgate.dev/proxy-port'] = '80; rm -rf'; }, /toolgate.dev\/proxy-port must be a port number/],
    ['a bad resource annotation', (pod) => { pod.metadata.annotations['toolgate.dev/cpu-limit'] = 'lots'; }, /cpu-limit must be a resource quantity/],
    ['a pass-through path with a dot segment', (pod) => { pod.metadata.annotations['toolgate.dev/passthrough-paths'] = '/.well-known/,/x/../mcp'; }, /passthrough-paths must be comma-separated plain absolute URL paths/],
    ['a UDP mcp port', (pod) => { pod.spec.containers[0].ports[0].protocol = 'UDP'; }, /not TCP/],
    ['host networking', (pod) => { pod.spec.hostNetwork = true; }, /host network/],
    ['a volume already named toolgate-policy', (pod) => { pod.spec.volumes.push({ name: 'toolgate-policy', emptyDir: {} }); }, /volume name toolgate-policy/],
    ['containers that are not a list', (pod) => { pod.spec.containers = { name: 'x' }; }, /not a pod with containers/],
    ['a port without a number', (pod) => { pod.spec.containers[0].ports[1] = { name: 'metrics' }; }, /not understood/],
    ['no mcp port and no upstream-port', (pod) => { pod.spec.containers[0].ports.shift(); }, /no container port is named mcp/],
    ['a pod that is not a pod at all', (_pod, request) => { request.object = 'pod'; }, /not a pod/],
  ];
  for (const [what, edit, warning] of cases) {
    it(what, () => assertUnchanged(respond(withPod('deployment-pod', edit)), warning));
  }
  it('a pod that names another port takes that one over instead', () => {
    const body = withPod('deployment-pod', (pod) => { pod.metadata.annotations['toolgate.dev/port-name'] = 'metrics'; });
    const applied = applyPatch(body.request.object, patchOf(respond(body)));
    assert.ok(applied.ok);
    const pod = applied.doc as any;
    assert.deepEqual(pod.spec.containers[0].ports.map((p: any) => p.name), ['mcp', 'mcp-upstream']);
    assert.equal(envOf(sidecarOf(pod)).TOOLGATE_UPSTREAM, 'http://127.0.0.1:9464');
    assert.equal(pod.spec.containers[0].readinessProbe.httpGet.port, 'mcp', 'probes on other ports are left alone');
  });
  it('passes the pass-through paths annotation on as TOOLGATE_PASSTHROUGH_PATHS', () => {
    const body = withPod('deployment-pod', (pod) => { pod.metadata.annotations['toolgate.dev/passthrough-paths'] = '/.well-known/, /healthz'; });
    const applied = applyPatch(body.request.object, patchOf(respond(body)));
    assert.ok(applied.ok);
    assert.equal(envOf(sidecarOf(applied.doc as any)).TOOLGATE_PASSTHROUGH_PATHS, '/.well-known/, /healthz');
  });
  it('warns when the drain timeout outlasts the grace period', () => {
    const body = withPod('deployment-pod', (pod) => { pod.metadata.annotations['toolgate.dev/drain-timeout-ms'] = '30000'; });
    assert.match(respond(body).warnings?.[0] ?? '', /drain-timeout-ms is not below terminationGracePeriodSeconds/);
  });
});

describe('malformed reviews', () => {
  it('a body that is not an AdmissionReview, or has no request uid, is refused (no uid to answer to)', () => {
    for (const body of [null, [], 'x', { kind: 'AdmissionReview' }, { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: { uid: 'a' } }]) {
      assert.deepEqual(review(body, config), { ok: false, reason: 'not_admission_review' });
    }
    for (const request of [undefined, {}, { uid: 7 }, { uid: '' }, { uid: 'a b' }]) {
      assert.deepEqual(review({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request }, config), { ok: false, reason: 'no_request_uid' });
    }
  });
  it('a review for another kind, or a subresource, is admitted unchanged with a warning', () => {
    const deployment = withPod('deployment-pod', (_pod, request) => { request.kind = { group: 'apps', version: 'v1', kind: 'Deployment' }; });
    assertUnchanged(respond(deployment), /not for a pod/);
    const binding = withPod('deployment-pod', (_pod, request) => { request.subResource = 'binding'; });
    assertUnchanged(respond(binding), /not for a pod/);
  });
  it('an UPDATE is admitted unchanged: containers cannot be added to a running pod', () => {
    const update = withPod('deployment-pod', (_pod, request) => { request.operation = 'UPDATE'; });
    assertUnchanged(respond(update), undefined);
  });
  it('keeps the request uid and never echoes annotation values', () => {
    const body = withPod('deployment-pod', (pod) => { pod.metadata.annotations['toolgate.dev/policy-configmap'] = 'SECRET_VALUE!'; });
    const response = respond(body);
    assert.equal(response.uid, body.request.uid);
    assert.doesNotMatch(JSON.stringify(response), /SECRET_VALUE/);
  });
});
