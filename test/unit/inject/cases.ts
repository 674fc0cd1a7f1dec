/**
 * The injector's refusal and patch cases, as data: the AdmissionReview tests
 * (cases.test.ts) run them against the injector directly, the control-plane
 * tests (test/kube/admission.test.ts) through a real API server.
 */
type Edit = (pod: any, request?: any) => void;
const annotate =
  (key: string, value: string): Edit =>
  (pod) => {
    pod.metadata.annotations[`toolgate.dev/${key}`] = value;
  };
const app = (pod: any) => pod.spec.containers[0];

/** [case, fixture, edit, field at fault, what the message must say] */
export const DENIED: readonly [string, string, Edit, string, RegExp][] = [
  [
    'proxy-port that is not a number',
    'deployment-pod',
    annotate('proxy-port', 'abc'),
    'metadata.annotations[toolgate.dev/proxy-port]',
    /proxy-port must be a port number from 1 to 65535: correct it or remove it/,
  ],
  [
    'admin-port out of range',
    'deployment-pod',
    annotate('admin-port', '70000'),
    'metadata.annotations[toolgate.dev/admin-port]',
    /admin-port must be a port number/,
  ],
  [
    'upstream-port with a shell payload',
    'numeric-port',
    annotate('upstream-port', '80; rm -rf'),
    'metadata.annotations[toolgate.dev/upstream-port]',
    /upstream-port must be a port number/,
  ],
  [
    'malformed policy ConfigMap name',
    'deployment-pod',
    annotate('policy-configmap', 'Tickets_Policy!'),
    'metadata.annotations[toolgate.dev/policy-configmap]',
    /policy-configmap must be a ConfigMap name/,
  ],
  [
    'malformed policy key',
    'deployment-pod',
    annotate('policy-key', '../etc'),
    'metadata.annotations[toolgate.dev/policy-key]',
    /policy-key must be a ConfigMap key/,
  ],
  [
    'malformed keys Secret name',
    'deployment-pod',
    annotate('keys-secret', 'UPPER'),
    'metadata.annotations[toolgate.dev/keys-secret]',
    /keys-secret must be a Secret name/,
  ],
  [
    'port-name that is not a port name',
    'deployment-pod',
    annotate('port-name', 'MCP_PORT'),
    'metadata.annotations[toolgate.dev/port-name]',
    /port-name must be a Kubernetes port name/,
  ],
  [
    'another port name while the app keeps mcp',
    'deployment-pod',
    annotate('port-name', 'metrics'),
    'spec.containers[0].ports[0].name',
    /keeps the name mcp while toolgate takes over metrics.*rename the port/,
  ],
  [
    'port-name toolgate reserves',
    'deployment-pod',
    annotate('port-name', 'toolgate-admin'),
    'metadata.annotations[toolgate.dev/port-name]',
    /a port name toolgate reserves/,
  ],
  [
    'unknown mode',
    'deployment-pod',
    annotate('mode', 'audit'),
    'metadata.annotations[toolgate.dev/mode]',
    /mode must be policy or transparent/,
  ],
  [
    'mcp-path that is not a path',
    'deployment-pod',
    annotate('mcp-path', 'mcp'),
    'metadata.annotations[toolgate.dev/mcp-path]',
    /mcp-path must be an absolute URL path/,
  ],
  [
    'pass-through path with a dot segment',
    'deployment-pod',
    annotate('passthrough-paths', '/.well-known/,/x/../mcp'),
    'metadata.annotations[toolgate.dev/passthrough-paths]',
    /comma-separated plain absolute URL paths/,
  ],
  [
    'log level',
    'deployment-pod',
    annotate('log-level', 'trace'),
    'metadata.annotations[toolgate.dev/log-level]',
    /debug, info, warn or error/,
  ],
  [
    'drain timeout',
    'deployment-pod',
    annotate('drain-timeout-ms', '-1'),
    'metadata.annotations[toolgate.dev/drain-timeout-ms]',
    /whole number of milliseconds/,
  ],
  [
    'resource quantity',
    'deployment-pod',
    annotate('cpu-limit', 'lots'),
    'metadata.annotations[toolgate.dev/cpu-limit]',
    /cpu-limit must be a resource quantity/,
  ],
  [
    'inject label that is neither true nor false',
    'deployment-pod',
    (pod) => {
      pod.metadata.labels['toolgate.dev/inject'] = 'yes';
    },
    'metadata.labels[toolgate.dev/inject]',
    /must be "true" or "false"/,
  ],
  [
    'inject annotation that is neither true nor false',
    'deployment-pod',
    annotate('inject', 'on'),
    'metadata.annotations[toolgate.dev/inject]',
    /must be "true" or "false"/,
  ],
  [
    'opt-in label and opt-out annotation',
    'deployment-pod',
    annotate('inject', 'false'),
    'metadata.annotations[toolgate.dev/inject]',
    /label and the annotation toolgate\.dev\/inject disagree: to opt out, set the label to "false" or remove it/,
  ],
  [
    'no policy and no transparent mode',
    'bare-pod',
    () => {},
    'metadata.annotations[toolgate.dev/policy-configmap]',
    /names no policy: set toolgate\.dev\/policy-configmap .* or set toolgate\.dev\/mode: transparent/,
  ],
  [
    'policy mode named but no policy',
    'bare-pod',
    (pod) => {
      pod.metadata.annotations = { 'toolgate.dev/mode': 'policy' };
    },
    'metadata.annotations[toolgate.dev/policy-configmap]',
    /names no policy/,
  ],
  [
    'transparent mode and a policy',
    'deployment-pod',
    annotate('mode', 'transparent'),
    'metadata.annotations[toolgate.dev/mode]',
    /transparent contradicts toolgate\.dev\/policy-configmap: remove one/,
  ],
  [
    'app port not named mcp',
    'deployment-pod',
    (pod) => {
      app(pod).ports[0].name = 'http';
      app(pod).readinessProbe.httpGet.port = 'http';
    },
    'spec.containers[].ports',
    /no container port is named mcp: name the MCP server's container port mcp, set toolgate\.dev\/port-name .* or set toolgate\.dev\/upstream-port/,
  ],
  [
    'no ports at all',
    'bare-pod',
    (pod) => {
      delete app(pod).ports;
      pod.metadata.annotations = { 'toolgate.dev/mode': 'transparent' };
    },
    'spec.containers[].ports',
    /no container port is named mcp/,
  ],
  [
    'two candidate ports',
    'deployment-pod',
    (pod) => {
      pod.spec.containers.push({ name: 'other', image: 'x', ports: [{ name: 'mcp', containerPort: 4000 }] });
    },
    'spec.containers[1].ports[0].name',
    /more than one container port is named mcp: .* rename the others/,
  ],
  [
    'mcp port on an init container',
    'deployment-pod',
    (pod) => {
      pod.spec.initContainers = [{ name: 'warm', image: 'x', ports: [app(pod).ports.shift()] }];
    },
    'spec.initContainers[0].ports[0]',
    /belongs to an init container/,
  ],
  [
    'UDP mcp port',
    'deployment-pod',
    (pod) => {
      app(pod).ports[0].protocol = 'UDP';
    },
    'spec.containers[0].ports[0].protocol',
    /must be TCP/,
  ],
  [
    'mcp port published on the node',
    'deployment-pod',
    (pod) => {
      app(pod).ports[0].hostPort = 3000;
    },
    'spec.containers[0].ports[0].hostPort',
    /hostPort, which reaches the app around toolgate: remove the hostPort/,
  ],
  [
    'upstream-port disagreeing with the named port',
    'deployment-pod',
    annotate('upstream-port', '3001'),
    'metadata.annotations[toolgate.dev/upstream-port]',
    /upstream-port disagrees with the port named mcp/,
  ],
  [
    'upstream-port on a port that has another name',
    'numeric-port',
    (pod) => {
      app(pod).ports = [{ name: 'http', containerPort: 8000 }];
    },
    'spec.containers[0].ports[0].name',
    /port 8000 already has a name.*set toolgate\.dev\/port-name to that name/,
  ],
  [
    'the mcp port number declared again under another name',
    'deployment-pod',
    (pod) => {
      pod.spec.containers.push({ name: 'b', image: 'x', ports: [{ name: 'http', containerPort: 3000 }] });
    },
    'spec.containers[1].ports[0]',
    /port 3000 is declared again.*declare it once/,
  ],
  [
    'upstream-port declared twice',
    'numeric-port',
    (pod) => {
      app(pod).ports = [{ containerPort: 8000 }];
      pod.spec.containers.push({ name: 'b', image: 'x', ports: [{ containerPort: 8000 }] });
    },
    'spec.containers[1].ports[0]',
    /declared more than once/,
  ],
  [
    'proxy port already used by the app',
    'deployment-pod',
    (pod) => {
      app(pod).ports[1].containerPort = 8080;
    },
    'spec.containers[0].ports[1]',
    /port 8080 is already used in the pod: choose another with toolgate\.dev\/proxy-port/,
  ],
  [
    'admin port equal to the upstream port',
    'deployment-pod',
    annotate('admin-port', '3000'),
    'spec.containers[0].ports[0]',
    /port 3000 is already used in the pod: choose another with toolgate\.dev\/admin-port/,
  ],
  [
    'proxy and admin on one port',
    'deployment-pod',
    (pod) => {
      annotate('proxy-port', '7000')(pod);
      annotate('admin-port', '7000')(pod);
    },
    'metadata.annotations[toolgate.dev/admin-port]',
    /both 7000/,
  ],
  [
    'a port already named mcp-upstream',
    'deployment-pod',
    (pod) => {
      app(pod).ports[1].name = 'mcp-upstream';
    },
    'spec.containers[0].ports[1].name',
    /port name mcp-upstream is reserved for toolgate/,
  ],
  [
    'a volume named like toolgate’s',
    'deployment-pod',
    (pod) => {
      pod.spec.volumes.push({ name: 'toolgate-policy', emptyDir: {} });
    },
    'spec.volumes[1].name',
    /volume name is reserved/,
  ],
  [
    'host networking',
    'deployment-pod',
    (pod) => {
      pod.spec.hostNetwork = true;
    },
    'spec.hostNetwork',
    /host network .* remove toolgate\.dev\/inject/,
  ],
  [
    'containers that are not a list',
    'deployment-pod',
    (pod) => {
      pod.spec.containers = { name: 'x' };
    },
    'spec.containers',
    /cannot read spec\.containers/,
  ],
  [
    'no containers',
    'deployment-pod',
    (pod) => {
      pod.spec.containers = [];
    },
    'spec.containers',
    /cannot read spec\.containers/,
  ],
  [
    'a container without a name',
    'deployment-pod',
    (pod) => {
      delete app(pod).name;
    },
    'spec.containers[0]',
    /every container needs a name/,
  ],
  [
    'a container with an empty name, as the API server sends a missing one',
    'deployment-pod',
    (pod) => {
      app(pod).name = '';
    },
    'spec.containers[0]',
    /every container needs a name/,
  ],
  [
    'a port without a number',
    'deployment-pod',
    (pod) => {
      app(pod).ports[1] = { name: 'metrics' };
    },
    'spec.containers[0].ports[1]',
    /every port a containerPort/,
  ],
  [
    'no spec',
    'deployment-pod',
    (pod) => {
      delete pod.spec;
    },
    'spec',
    /no spec/,
  ],
  [
    'a container named toolgate that is not toolgate',
    'deployment-pod',
    (pod) => {
      pod.spec.containers.push({ name: 'toolgate', image: 'x' });
    },
    'spec.containers[1]',
    /rename that container/,
  ],
  [
    'the app itself named toolgate, holding the MCP port',
    'deployment-pod',
    (pod) => {
      app(pod).name = 'toolgate';
    },
    'spec.containers[0]',
    /rename that container/,
  ],
];

/** [case, fixture, edit, the port name toolgate must hold] */
export const PATCHED: readonly [string, string, Edit, string][] = [
  ['named port with probes, policy and keys', 'deployment-pod', () => {}, 'mcp'],
  ['numeric upstream port, nothing declared', 'numeric-port', () => {}, 'mcp'],
  [
    'numeric upstream port declared without a name',
    'numeric-port',
    (pod) => {
      app(pod).ports = [{ containerPort: 8000, protocol: 'TCP' }];
    },
    'mcp',
  ],
  ['transparent mode', 'transparent-pod', () => {}, 'mcp'],
  [
    'another port name',
    'deployment-pod',
    (pod) => {
      app(pod).ports[0].name = 'http';
      app(pod).readinessProbe.httpGet.port = 'http';
      annotate('port-name', 'http')(pod);
    },
    'http',
  ],
  [
    'opt-in by annotation only',
    'deployment-pod',
    (pod) => {
      delete pod.metadata.labels['toolgate.dev/inject'];
      annotate('inject', 'true')(pod);
    },
    'mcp',
  ],
  [
    'no labels map at all',
    'deployment-pod',
    (pod) => {
      delete pod.metadata.labels;
      annotate('inject', 'true')(pod);
    },
    'mcp',
  ],
  [
    'existing init containers and a native sidecar of its own',
    'deployment-pod',
    (pod) => {
      pod.spec.initContainers = [
        { name: 'migrate', image: 'x' },
        { name: 'log-shipper', image: 'y', restartPolicy: 'Always' },
      ];
    },
    'mcp',
  ],
  [
    'moved proxy and admin ports',
    'deployment-pod',
    (pod) => {
      annotate('proxy-port', '18080')(pod);
      annotate('admin-port', '19090')(pod);
    },
    'mcp',
  ],
];
