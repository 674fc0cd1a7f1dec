/**
 * The optional init container that closes the port bypass inside the pod, as
 * Istio's istio-init does: connections from outside the pod to the app's port
 * are redirected to toolgate's. Only PREROUTING is touched, so toolgate's own
 * loopback connection to the app is not redirected. It is the one container
 * that needs a privilege (NET_ADMIN, to change the pod's netfilter rules),
 * and it exits before any other container starts.
 */
import type { RedirectConfig } from './config.ts';
import type { JsonObject } from './k8s.ts';

export const REDIRECT_CONTAINER_NAME = 'toolgate-redirect';

export function redirectContainer(redirect: RedirectConfig, upstreamPort: number, proxyPort: number): JsonObject {
  return {
    name: REDIRECT_CONTAINER_NAME,
    image: redirect.image,
    imagePullPolicy: redirect.imagePullPolicy,
    command: ['iptables'],
    args: [
      '-t',
      'nat',
      '-A',
      'PREROUTING',
      '-p',
      'tcp',
      '--dport',
      String(upstreamPort),
      '-j',
      'REDIRECT',
      '--to-ports',
      String(proxyPort),
    ],
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '32Mi' } },
    securityContext: {
      // netfilter changes need root in the pod's network namespace and NET_ADMIN; nothing else is kept.
      runAsUser: 0,
      runAsNonRoot: false,
      privileged: false,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'], add: ['NET_ADMIN'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
}
