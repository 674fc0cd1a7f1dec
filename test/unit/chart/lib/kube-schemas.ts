/**
 * Validates rendered Kubernetes objects against the OpenAPI schemas compiled
 * into kubernetes-models (core APIs) and its Prometheus Operator and
 * cert-manager packages (CRDs), offline. Besides what the schemas say, a field
 * the schema does not define is a problem too, as it is for `kubectl apply`
 * with its default strict field validation.
 */
import type { ErrorObject } from 'ajv';
import { parseAllDocuments } from 'yaml';
import { MutatingWebhookConfiguration } from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { CronJob, Job } from 'kubernetes-models/batch/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ConfigMap, Namespace, Pod, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { Certificate, ClusterIssuer, Issuer } from '@kubernetes-models/cert-manager/cert-manager.io/v1';
import {
  PodMonitor,
  PrometheusRule,
  ServiceMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';

interface ModelClass {
  readonly apiVersion: string;
  readonly kind: string;
  readonly prototype: { validate(): void };
}

const MODELS: readonly ModelClass[] = [
  ConfigMap,
  Namespace,
  Pod,
  Secret,
  Service,
  ServiceAccount,
  Deployment,
  Job,
  CronJob,
  MutatingWebhookConfiguration,
  NetworkPolicy,
  Ingress,
  PodDisruptionBudget,
  Role,
  RoleBinding,
  ClusterRole,
  ClusterRoleBinding,
  Certificate,
  Issuer,
  ClusterIssuer,
  PodMonitor,
  PrometheusRule,
  ServiceMonitor,
];

const BY_TYPE = new Map(MODELS.map((m) => [`${m.apiVersion}/${m.kind}`, m]));

/** The apiVersion/kind pairs this module has a schema for. */
export const KNOWN_TYPES: readonly string[] = [...BY_TYPE.keys()];

interface TypeMeta {
  readonly apiVersion?: unknown;
  readonly kind?: unknown;
  readonly metadata?: { readonly name?: unknown };
}

/**
 * Every document of a multi-document YAML stream, empty ones dropped; YAML
 * errors are problems. Read as YAML 1.1, as the API server's YAML decoder
 * does, so an unquoted `on` is a boolean and `0644` an octal number here too.
 */
export function parseObjects(text: string): { ok: true; objects: unknown[] } | { ok: false; reason: string } {
  const docs = parseAllDocuments(text, { version: '1.1' });
  const broken = docs.flatMap((d) => d.errors.map((e) => e.message));
  if (broken.length > 0) return { ok: false, reason: broken.join('; ') };
  return { ok: true, objects: docs.map((d) => d.toJS()).filter((o) => o !== null && o !== undefined) };
}

/** Problems with one object, each `kind/name: /json/pointer message`; empty when it is valid. */
export function objectProblems(object: unknown): string[] {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return ['a document is not an object'];
  const o = object as TypeMeta;
  const label = `${String(o.kind)}/${String(o.metadata?.name)}`;
  const model = BY_TYPE.get(`${String(o.apiVersion)}/${String(o.kind)}`);
  if (model === undefined) return [`${label}: no schema for apiVersion ${String(o.apiVersion)} kind ${String(o.kind)}`];
  const reads = new Map<object, Set<string>>();
  const schemaErrors = validateTracked(model, object, reads).filter((e) => !isBase64WithLineBreaks(object, e));
  return [
    ...schemaErrors.map((e) => `${label}: ${e.instancePath || '/'} ${e.message ?? e.keyword}`),
    ...unknownFields(object, reads, '').map((p) => `${label}: ${p} is not a field of the schema`),
  ];
}

/** Problems with every object, in order; an empty list means all are valid. */
export function allProblems(objects: readonly unknown[]): string[] {
  return objects.flatMap(objectProblems);
}

/**
 * Runs the model's compiled schema on a proxy of the object that records which
 * keys the schema looked at: it reads every property it defines and walks
 * every key of a map, so a key it never touched is one it does not define.
 * The model's validate() is called on the proxy because it only hands `this`
 * to the compiled schema.
 */
function validateTracked(model: ModelClass, object: object, reads: Map<object, Set<string>>): ErrorObject[] {
  const track = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null) return value;
    let seen = reads.get(value);
    if (seen === undefined) {
      seen = new Set();
      reads.set(value, seen);
    }
    const read = seen;
    return new Proxy(value, {
      get(target, key, receiver) {
        if (typeof key !== 'string') return Reflect.get(target, key, receiver);
        read.add(key);
        return track(Reflect.get(target, key, receiver));
      },
      has(target, key) {
        if (typeof key === 'string') read.add(key);
        return Reflect.has(target, key);
      },
      ownKeys(target) {
        for (const key of Object.keys(target)) read.add(key);
        return Reflect.ownKeys(target);
      },
    });
  };
  try {
    model.prototype.validate.call(track(object));
    return [];
  } catch (error) {
    const errors = (error as { errors?: unknown }).errors;
    if (Array.isArray(errors)) return errors as ErrorObject[];
    return [{ keyword: 'validate', instancePath: '', schemaPath: '', params: {}, message: 'the validator failed' }];
  }
}

/**
 * Keys of objects the schema walked but did not define. An object whose keys
 * the schema never read at all is free-form there (no properties, like
 * x-kubernetes-preserve-unknown-fields), which the API server accepts too.
 */
function unknownFields(value: unknown, reads: Map<object, Set<string>>, at: string): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const read = reads.get(value);
  if (read === undefined || read.size === 0) return [];
  return Object.entries(value).flatMap(([key, child]) => {
    const path = `${at}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (!Array.isArray(value) && !read.has(key)) return [path];
    return unknownFields(child, reads, path);
  });
}

/**
 * kubectl kustomize wraps the base64 of generated Secret data; the API server
 * decodes base64 ignoring line breaks (Go's encoding/base64), so only the
 * schema's stricter single-line pattern would object.
 */
function isBase64WithLineBreaks(object: object, error: ErrorObject): boolean {
  if (error.keyword !== 'format' || error.params.format !== 'byte') return false;
  const value = error.instancePath
    .split('/')
    .slice(1)
    .map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>(
      (node, key) => (typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined),
      object,
    );
  if (typeof value !== 'string') return false;
  return /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(value.replace(/[\r\n]/g, ''));
}
