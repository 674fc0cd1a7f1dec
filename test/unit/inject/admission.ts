/**
 * Answers AdmissionReviews with the injector and checks what the answers do:
 * patches are applied with a JSON Patch library (validating every operation,
 * as the API server does), and the resulting Pod is checked against the
 * Kubernetes schema and for toolgate standing in front of the MCP port.
 */
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import type { InjectorConfig } from '../../../src/inject/config.ts';
import { review } from '../../../src/inject/review.ts';
import type { AdmissionResponse } from '../../../src/inject/review.ts';
import { objectProblems } from '../chart/lib/kube-schemas.ts';

export function respond(body: unknown, config: InjectorConfig): AdmissionResponse {
  const result = review(body, config);
  assert.ok(result.ok, 'the review is answered');
  assert.equal(result.review.apiVersion, 'admission.k8s.io/v1');
  assert.equal(result.review.kind, 'AdmissionReview');
  return result.review.response;
}

export function patchOf(response: AdmissionResponse): jsonpatch.Operation[] {
  assert.equal(response.allowed, true);
  assert.equal(response.patchType, 'JSONPatch');
  return JSON.parse(Buffer.from(response.patch as string, 'base64').toString('utf8'));
}

/** Applies the patch to a copy of the pod; throws when an operation does not apply. */
export function applied(pod: unknown, patch: readonly jsonpatch.Operation[]): any {
  return jsonpatch.applyPatch(structuredClone(pod), structuredClone(patch) as jsonpatch.Operation[], true, false)
    .newDocument;
}

/** The Pod as the API server would store it: its own schema problems, the apiVersion and kind filled in. */
export function podProblems(pod: any): string[] {
  return objectProblems({ apiVersion: 'v1', kind: 'Pod', ...pod, metadata: { name: 'checked', ...pod.metadata } });
}

const allContainers = (pod: any): any[] => [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];

/**
 * Why toolgate is not in front of the port named `portName`, if it is not:
 * exactly one container port in the pod carries the name, it is toolgate's,
 * toolgate runs for the pod's whole life (a container, or an init container
 * with restartPolicy Always), and it forwards to a port on loopback that is
 * not its own.
 */
export function frontProblems(pod: any, portName: string): string[] {
  const holders = allContainers(pod).filter((c) => (c.ports ?? []).some((p: any) => p.name === portName));
  if (holders.length !== 1) return [`${holders.length} containers declare the port name ${portName}`];
  const [toolgate] = holders;
  if (toolgate.name !== 'toolgate') return [`the port name ${portName} belongs to ${toolgate.name}`];
  const regular = (pod.spec.containers ?? []).includes(toolgate);
  if (!regular && toolgate.restartPolicy !== 'Always') return ['toolgate is an init container that exits'];
  const own = toolgate.ports.find((p: any) => p.name === portName).containerPort;
  const upstream = /^http:\/\/127\.0\.0\.1:(\d+)$/.exec(
    toolgate.env.find((e: any) => e.name === 'TOOLGATE_UPSTREAM')?.value ?? '',
  );
  if (upstream === null) return ['toolgate has no loopback upstream'];
  if (Number(upstream[1]) === own) return ['toolgate forwards to itself'];
  return [];
}

export const sidecarOf = (pod: any): any => allContainers(pod).find((c) => c.name === 'toolgate');
export const envOf = (container: any): Record<string, unknown> =>
  Object.fromEntries(container.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
