/**
 * Generated Pod specs that carry the opt-in label: mostly the usual, sometimes
 * anything, so that both patches and refusals are reached often. The property
 * tests run them against the injector (property.test.ts) and through a real
 * API server (test/kube/admission.test.ts).
 */
import fc from 'fast-check';

const PORT_NAMES = ['mcp', 'http', 'metrics', 'mcp-upstream', 'toolgate-admin', 'MCP', ''] as const;
const PORT_NUMBERS = [3000, 8000, 8080, 9090, 9464, 0, 70000] as const;

/** Mostly the usual, sometimes anything: so that both patches and refusals are reached often. */
const usually = <T, U>(usual: fc.Arbitrary<T>, unusual: fc.Arbitrary<U>) =>
  fc.oneof({ weight: 4, arbitrary: usual }, { weight: 1, arbitrary: unusual });
const sometimes = <T>(value: fc.Arbitrary<T>) => usually(fc.constant(undefined), value);

const port = fc.record(
  {
    name: fc.option(fc.constantFrom(...PORT_NAMES), { nil: undefined }),
    containerPort: fc.constantFrom(...PORT_NUMBERS),
    protocol: sometimes(fc.constantFrom('TCP', 'UDP')),
    hostPort: sometimes(fc.constantFrom(3000, 31000)),
  },
  { requiredKeys: ['containerPort'] },
);

const appPorts = usually(
  fc.constant([{ name: 'mcp', containerPort: 3000 }]),
  fc.option(fc.array(port, { maxLength: 3 }), { nil: undefined }),
);

const container = (names: readonly string[], ports: fc.Arbitrary<unknown>) =>
  fc.record(
    {
      name: fc.constantFrom(...names),
      image: fc.constant('registry.example.com/app:1'),
      ports,
      readinessProbe: fc.option(fc.constant({ httpGet: { path: '/health', port: 'mcp' } }), { nil: undefined }),
    },
    { requiredKeys: ['name', 'image'] },
  );

const initContainer = fc
  .tuple(
    container(['init', 'toolgate', 'warm'], fc.option(fc.array(port, { maxLength: 2 }), { nil: undefined })),
    fc.constantFrom(undefined, 'Always'),
  )
  // oxlint-disable-next-line no-map-spread -- fast-check's map: generated values are shared with shrinking and must not be edited in place
  .map(([c, restartPolicy]) => (restartPolicy === undefined ? c : { ...c, restartPolicy }));

const policy = usually(
  fc.constantFrom({ 'toolgate.dev/policy-configmap': 'tickets-policy' }, { 'toolgate.dev/mode': 'transparent' }),
  fc.constantFrom(
    {},
    { 'toolgate.dev/policy-configmap': 'Bad_Name' },
    { 'toolgate.dev/mode': 'audit' },
    { 'toolgate.dev/mode': 'policy' },
    { 'toolgate.dev/mode': 'transparent', 'toolgate.dev/policy-configmap': 'tickets-policy' },
  ),
);

const tuning = fc
  .record({
    'toolgate.dev/port-name': fc.constantFrom('mcp', 'http', 'metrics', 'mcp-upstream', 'NOPE'),
    'toolgate.dev/upstream-port': fc.constantFrom('3000', '8000', 'abc', '0'),
    'toolgate.dev/proxy-port': fc.constantFrom('8080', '18080', '3000', 'x'),
    'toolgate.dev/admin-port': fc.constantFrom('9090', '8080', '19090'),
    'toolgate.dev/inject': fc.constantFrom('true', 'false', 'yes'),
  })
  .chain((all) =>
    fc
      .subarray(Object.keys(all), { maxLength: 2 })
      .map((keys) => Object.fromEntries(keys.map((k) => [k, all[k as keyof typeof all]]))),
  );

export const pod = fc
  .record({
    metadata: fc.record({
      labels: fc.constant({ 'toolgate.dev/inject': 'true' }),
      // oxlint-disable-next-line no-map-spread -- fast-check's map: generated values are shared with shrinking and must not be edited in place
      annotations: fc.tuple(policy, tuning).map(([a, b]) => ({ ...a, ...b })),
    }),
    spec: fc.record(
      {
        containers: fc
          .tuple(
            container(['app'], appPorts),
            usually(
              fc.constant([]),
              fc.array(container(['sidecar', 'toolgate', 'app'], sometimes(fc.array(port, { maxLength: 2 }))), {
                maxLength: 2,
              }),
            ),
          )
          // oxlint-disable-next-line no-map-spread -- fast-check's map: generated values are shared with shrinking and must not be edited in place
          .map(([first, rest]) => [first, ...rest]),
        initContainers: sometimes(fc.array(initContainer, { maxLength: 2 })),
        restartPolicy: sometimes(fc.constantFrom('Always', 'Never', 'OnFailure')),
        hostNetwork: sometimes(fc.boolean()),
        volumes: sometimes(
          fc.array(fc.record({ name: fc.constantFrom('data', 'toolgate-policy'), emptyDir: fc.constant({}) }), {
            maxLength: 2,
          }),
        ),
      },
      { requiredKeys: ['containers'] },
    ),
  })
  .map((p) => JSON.parse(JSON.stringify(p)));

export function review(object: unknown): Record<string, unknown> {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'f6a7b8c9-0000-4000-8000-000000000006',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      operation: 'CREATE',
      object,
    },
  };
}
