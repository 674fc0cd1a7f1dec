/**
 * `npm run kube:up`: the tests' control plane for a developer's own kubectl
 * and helm, built first if need be. Prints the kubeconfig and runs until
 * Ctrl-C, then stops everything and removes its folder.
 */
import { once } from 'node:events';
import { startControlPlane } from './control-plane.ts';

const started = Date.now();
const cp = await startControlPlane();
process.stdout.write(
  [
    `Kubernetes ${cp.version} is up at ${cp.server} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
    `  export KUBECONFIG=${cp.kubeconfig}`,
    `  audit log: ${cp.auditLog}`,
    'Ctrl-C stops it.',
    '',
  ].join('\n'),
);
await Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
await cp.stop();
