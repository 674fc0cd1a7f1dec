/**
 * A second mutating webhook, as a service mesh's would be: it appends a
 * container to every opted-in Pod. Registered under a name that sorts after
 * toolgate's, it runs after the injector, so the API server must call the
 * injector again (reinvocationPolicy: IfNeeded) on the Pod it changed.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { makeCert } from '../unit/inject/tls.ts';

export interface MeshWebhook {
  /** The MutatingWebhookConfiguration that points the API server at it. */
  readonly configuration: Record<string, unknown>;
  readonly close: () => Promise<void>;
}

export const MESH_CONTAINER = 'mesh-proxy';

export async function startMeshWebhook(): Promise<MeshWebhook> {
  const tls = makeCert();
  const server = createServer({ cert: tls.cert, key: readFileSync(tls.keyFile) }, (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const review = JSON.parse(body);
      const containers: { name: string }[] = review.request.object.spec.containers;
      const patch = containers.some((c) => c.name === MESH_CONTAINER)
        ? []
        : [
            {
              op: 'add',
              path: '/spec/containers/-',
              value: { name: MESH_CONTAINER, image: 'registry.example.com/mesh:1' },
            },
          ];
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: {
            uid: review.request.uid,
            allowed: true,
            patchType: 'JSONPatch',
            patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
          },
        }),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const configuration = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'zz-mesh' },
    webhooks: [
      {
        name: 'inject.mesh.example.com',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        reinvocationPolicy: 'Never',
        rules: [
          { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' },
        ],
        objectSelector: { matchLabels: { 'toolgate.dev/inject': 'true' } },
        clientConfig: { url: `https://127.0.0.1:${port}/mutate`, caBundle: tls.cert.toString('base64') },
      },
    ],
  };
  return { configuration, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
