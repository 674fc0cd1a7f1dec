import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseInjectorConfig } from '../../../src/inject/config.ts';
import { review } from '../../../src/inject/review.ts';
import type { AdmissionResponse } from '../../../src/inject/review.ts';
import { SECURITY_CONTEXT } from '../../../src/inject/sidecar.ts';
import { applied, envOf, frontProblems, patchOf, podProblems, respond as answer, sidecarOf } from './admission.ts';
import { assertGolden, fixtureConfig, readReview } from './fixtures.ts';

const config = fixtureConfig();
const respond = (body: unknown): AdmissionResponse => answer(body, config);

function inject(name: string): { patch: any[]; pod: any; response: AdmissionResponse; body: Record<string, any> } {
  const body = readReview(name);
  const response = respond(body);
  assert.equal(response.uid, body.request.uid);
  const patch = patchOf(response);
  const pod = applied(body.request.object, patch);
  assert.deepEqual(podProblems(pod), [], 'the patched pod is a valid Pod');
  return { patch, pod, response, body };
}

function withPod(name: string, edit: (pod: any, request: any) => void): Record<string, any> {
  const body = readReview(name);
  edit(body.request.object, body.request);
  return body;
}

function assertUnchanged(response: AdmissionResponse, warning: RegExp | undefined): void {
  assert.equal(response.allowed, true);
  assert.equal(response.patch, undefined);
  assert.equal(response.patchType, undefined);
  assert.match(response.auditAnnotations?.injection ?? '', /^skipped: /);
  if (warning === undefined) assert.equal(response.warnings, undefined);
  else {
    assert.equal(response.warnings?.length, 1);
    assert.match(response.warnings?.[0] ?? '', warning);
  }
}

describe('injecting a pod from a Deployment (named port, probes on it, policy and keys)', () => {
  const { patch, pod, response } = inject('deployment-pod');

  it('matches the golden patch and the golden pod', () => {
    assertGolden('deployment-pod.patch.json', patch);
    assertGolden('deployment-pod.expected-pod.json', pod);
  });
  it('puts toolgate in front of the port named mcp, as a native sidecar the app starts after', () => {
    assert.deepEqual(frontProblems(pod, 'mcp'), []);
    assert.equal(pod.spec.containers.length, 1, 'no regular container is added');
    const sidecar = pod.spec.initContainers.at(-1);
    assert.equal(sidecar.name, 'toolgate');
    assert.equal(sidecar.restartPolicy, 'Always');
    assert.deepEqual(sidecar.startupProbe.httpGet, { path: '/healthz', port: 'toolgate-admin', scheme: 'HTTP' });
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
    assert.ok(
      sidecar.volumeMounts.filter((m: any) => m.name !== 'toolgate-state').every((m: any) => m.readOnly === true),
    );
    assert.deepEqual(
      sidecar.volumeMounts.find((m: any) => m.name === 'toolgate-state'),
      { name: 'toolgate-state', mountPath: '/var/lib/toolgate' },
      'the idempotency journal, on an emptyDir',
    );
    assert.equal(envOf(sidecar).TOOLGATE_IDEMPOTENCY_FILE, '/var/lib/toolgate/idempotency.journal');
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
  it('marks the pod (a label monitors and policies select on, and an annotation) and says nothing to warn about', () => {
    assert.equal(pod.metadata.annotations['toolgate.dev/status'], 'injected');
    assert.equal(pod.metadata.labels['toolgate.dev/injected'], 'true');
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
  it('refuses a pod that has a container named toolgate which does not hold the port', () => {
    const body = withPod('deployment-pod', (p) => {
      p.spec.containers.push({ name: 'toolgate', image: 'impostor' });
    });
    const refusal = respond(body);
    assert.equal(refusal.allowed, false);
    assert.match(
      refusal.status?.message ?? '',
      /container is named toolgate but toolgate is not in front of the port named mcp/,
    );
    assert.equal(refusal.status?.details.causes[0].field, 'spec.containers[1]');
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
    assert.deepEqual(frontProblems(pod, 'mcp'), []);
    const sidecar = sidecarOf(pod);
    const env = envOf(sidecar);
    assert.equal(env.TOOLGATE_UPSTREAM, 'http://127.0.0.1:8000');
    assert.equal(env.TOOLGATE_POLICY_FILE, '/etc/toolgate/policy/search.yaml');
    assert.equal(env.TOOLGATE_MCP_PATH, '/v1/mcp');
    assert.deepEqual(sidecar.resources.limits, { memory: '512Mi' });
    assert.deepEqual(pod.spec.volumes, [
      { name: 'toolgate-policy', configMap: { name: 'search-policy' } },
      { name: 'toolgate-state', emptyDir: {} },
    ]);
    assert.ok(patch.some((op) => op.op === 'add' && op.path === '/spec/volumes'));
  });
});

describe('a pod that opts in without naming a policy', () => {
  it('is refused, naming the annotation and both ways to fix it', () => {
    const body = readReview('bare-pod');
    const response = respond(body);
    assert.equal(response.uid, body.request.uid);
    assert.equal(response.allowed, false);
    assert.equal(response.patch, undefined);
    assert.deepEqual(response.status, {
      status: 'Failure',
      code: 422,
      reason: 'Invalid',
      message: response.status?.message,
      details: {
        kind: 'pods',
        name: 'bare-mcp',
        causes: [
          {
            reason: 'FieldValueInvalid',
            field: 'metadata.annotations[toolgate.dev/policy-configmap]',
            message: response.status?.message,
          },
        ],
      },
    });
    assert.match(
      response.status?.message ?? '',
      /^toolgate: .*names no policy: set toolgate\.dev\/policy-configmap .* or set toolgate\.dev\/mode: transparent/,
    );
    assert.equal(response.auditAnnotations?.injection, 'denied: metadata.annotations[toolgate.dev/policy-configmap]');
  });
  it('names the pod for kubectl by its name or, from a ReplicaSet, its generateName, and never by a name Kubernetes would refuse', () => {
    const named = (metadata: Record<string, unknown>) => {
      const body = readReview('bare-pod');
      body.request.object.metadata = { labels: { 'toolgate.dev/inject': 'true' }, ...metadata };
      return respond(body).status?.details.name;
    };
    assert.equal(named({ name: 'bare-mcp' }), 'bare-mcp');
    assert.equal(named({ generateName: 'tickets-mcp-7c9d8f6b5d-' }), 'tickets-mcp-7c9d8f6b5d-');
    assert.equal(named({ name: 'Bad Name; rm -rf' }), undefined);
    assert.equal(named({ name: 'x'.repeat(254) }), undefined);
    assert.equal(named({}), undefined);
  });
  it('is injected without a policy only when it says toolgate.dev/mode: transparent, with a warning', () => {
    const { patch, pod, response } = inject('transparent-pod');
    assertGolden('transparent-pod.patch.json', patch);
    assertGolden('transparent-pod.expected-pod.json', pod);
    assert.deepEqual(frontProblems(pod, 'mcp'), []);
    assert.equal(envOf(sidecarOf(pod)).TOOLGATE_POLICY_FILE, undefined);
    assert.equal(sidecarOf(pod).volumeMounts, undefined);
    assert.deepEqual(response.warnings, [
      'toolgate: toolgate.dev/mode is transparent: toolgate forwards every request without enforcing policy',
    ]);
  });
  it('is refused when it asks for transparent mode and names a policy too', () => {
    const body = withPod('deployment-pod', (p) => {
      p.metadata.annotations['toolgate.dev/mode'] = 'transparent';
    });
    const response = respond(body);
    assert.equal(response.allowed, false);
    assert.match(response.status?.message ?? '', /transparent contradicts toolgate\.dev\/policy-configmap/);
  });
});

describe('a Job pod', () => {
  it('gets toolgate as a native sidecar, which the Job does not wait for', () => {
    const { patch, pod } = inject('job-pod');
    assertGolden('job-pod.patch.json', patch);
    assert.equal(pod.spec.restartPolicy, 'Never', "the pod's own restart policy is kept");
    assert.deepEqual(
      pod.spec.containers.map((c: any) => c.name),
      ['indexer'],
      'Job completion counts only the app',
    );
    assert.deepEqual(
      pod.spec.initContainers.map((c: any) => [c.name, c.restartPolicy]),
      [
        ['fetch-corpus', undefined],
        ['toolgate', 'Always'],
      ],
      "the pod's own init step runs first, then toolgate starts and keeps running until the app exits",
    );
    assert.ok(sidecarOf(pod).startupProbe);
    assert.deepEqual(frontProblems(pod, 'mcp'), []);
  });
  it('is refused with plain sidecars, which would never let it complete', () => {
    const plain = parseInjectorConfig('image: ghcr.io/toolgate/toolgate:0.1.0\nsidecarMode: plain\n');
    assert.ok(plain.ok);
    const response = answer(readReview('job-pod'), plain.config);
    assert.equal(response.allowed, false);
    assert.equal(response.status?.details.causes[0].field, 'spec.restartPolicy');
    assert.match(
      response.status?.message ?? '',
      /runs to completion .* Job .* never complete: use native sidecars \(chart value sidecar\.mode: native/,
    );
  });
});

describe('pods that did not opt in are admitted unchanged, silently', () => {
  const cases: [string, (pod: any, request: any) => void][] = [
    [
      'no opt-in',
      (pod) => {
        delete pod.metadata.labels['toolgate.dev/inject'];
      },
    ],
    [
      'opt-out annotation without a label',
      (pod) => {
        delete pod.metadata.labels['toolgate.dev/inject'];
        pod.metadata.annotations['toolgate.dev/inject'] = 'false';
      },
    ],
    [
      'opt-out label',
      (pod) => {
        pod.metadata.labels['toolgate.dev/inject'] = 'false';
      },
    ],
    [
      'opt-out label with a broken pod spec',
      (pod) => {
        pod.metadata.labels['toolgate.dev/inject'] = 'false';
        pod.spec.containers = 'x';
      },
    ],
    [
      'an object that is not a pod at all',
      (_pod, request) => {
        request.object = 'pod';
      },
    ],
  ];
  for (const [what, edit] of cases) {
    it(what, () => assertUnchanged(respond(withPod('deployment-pod', edit)), undefined));
  }
});

describe('annotations that change the injection', () => {
  it('a pod that names another port takes that one over instead', () => {
    const body = withPod('deployment-pod', (pod) => {
      pod.spec.containers[0].ports[0].name = 'http';
      pod.spec.containers[0].readinessProbe.httpGet.port = 'http';
      pod.metadata.annotations['toolgate.dev/port-name'] = 'http';
    });
    const pod = applied(body.request.object, patchOf(respond(body)));
    assert.deepEqual(frontProblems(pod, 'http'), []);
    assert.deepEqual(
      pod.spec.containers[0].ports.map((p: any) => p.name),
      ['mcp-upstream', 'metrics'],
    );
    assert.equal(envOf(sidecarOf(pod)).TOOLGATE_UPSTREAM, 'http://127.0.0.1:3000');
    assert.equal(pod.spec.containers[0].readinessProbe.httpGet.port, 'mcp-upstream', 'probes follow the renamed port');
  });
  it('refuses to take over another port while the app keeps a port named mcp, which Services and the NetworkPolicy target', () => {
    const response = respond(
      withPod('deployment-pod', (pod) => {
        pod.metadata.annotations['toolgate.dev/port-name'] = 'metrics';
      }),
    );
    assert.equal(response.allowed, false);
    assert.equal(response.status?.details.causes[0].field, 'spec.containers[0].ports[0].name');
    assert.match(response.status?.message ?? '', /keeps the name mcp while toolgate takes over metrics/);
  });
  it('passes the pass-through paths annotation on as TOOLGATE_PASSTHROUGH_PATHS', () => {
    const body = withPod('deployment-pod', (pod) => {
      pod.metadata.annotations['toolgate.dev/passthrough-paths'] = '/.well-known/, /healthz';
    });
    const pod = applied(body.request.object, patchOf(respond(body)));
    assert.equal(envOf(sidecarOf(pod)).TOOLGATE_PASSTHROUGH_PATHS, '/.well-known/, /healthz');
  });
  it('warns when the drain timeout outlasts the grace period', () => {
    const body = withPod('deployment-pod', (pod) => {
      pod.metadata.annotations['toolgate.dev/drain-timeout-ms'] = '30000';
    });
    assert.match(respond(body).warnings?.[0] ?? '', /drain-timeout-ms is not below terminationGracePeriodSeconds/);
  });
});

describe('malformed reviews', () => {
  it('a body that is not an AdmissionReview, or has no request uid, is refused (no uid to answer to)', () => {
    for (const body of [
      null,
      [],
      'x',
      { kind: 'AdmissionReview' },
      { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: { uid: 'a' } },
    ]) {
      assert.deepEqual(review(body, config), { ok: false, reason: 'not_admission_review' });
    }
    for (const request of [undefined, {}, { uid: 7 }, { uid: '' }, { uid: 'a b' }]) {
      assert.deepEqual(review({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request }, config), {
        ok: false,
        reason: 'no_request_uid',
      });
    }
  });
  it('a review for another kind, or a subresource, is admitted unchanged with a warning', () => {
    const deployment = withPod('deployment-pod', (_pod, request) => {
      request.kind = { group: 'apps', version: 'v1', kind: 'Deployment' };
    });
    assertUnchanged(respond(deployment), /not for a pod/);
    const binding = withPod('deployment-pod', (_pod, request) => {
      request.subResource = 'binding';
    });
    assertUnchanged(respond(binding), /not for a pod/);
  });
  it('an UPDATE is admitted unchanged: containers cannot be added to a running pod', () => {
    const update = withPod('deployment-pod', (_pod, request) => {
      request.operation = 'UPDATE';
    });
    assertUnchanged(respond(update), undefined);
  });
  it('keeps the request uid and never echoes annotation values', () => {
    const body = withPod('deployment-pod', (pod) => {
      pod.metadata.annotations['toolgate.dev/policy-configmap'] = 'SECRET_VALUE!';
    });
    const response = respond(body);
    assert.equal(response.uid, body.request.uid);
    assert.doesNotMatch(JSON.stringify(response), /SECRET_VALUE/);
  });
});
