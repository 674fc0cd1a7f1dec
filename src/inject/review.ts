/**
 * AdmissionReview v1 in, AdmissionReview v1 out. Every review that carries a
 * request uid gets an answer: a JSONPatch when the sidecar is injected; a
 * denial (422 Invalid, the field at fault in details.causes) when a pod opted
 * in and cannot be injected; the pod unchanged otherwise, with the reason as an
 * audit annotation. Only a body that is not an AdmissionReview at all is
 * refused, since there is no uid to answer to.
 */
import type { InjectorConfig } from './config.ts';
import { planInjection } from './inject.ts';
import { isRecord } from '../json/record.ts';

const API_VERSION = 'admission.k8s.io/v1';

/** What the API server returns to the client that created the pod (metav1.Status). */
interface AdmissionStatus {
  readonly status: 'Failure';
  readonly code: 422;
  readonly reason: 'Invalid';
  readonly message: string;
  readonly details: {
    readonly kind: 'pods';
    readonly name?: string;
    readonly causes: readonly [
      { readonly reason: 'FieldValueInvalid'; readonly field: string; readonly message: string },
    ];
  };
}

export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: AdmissionStatus;
  readonly patchType?: 'JSONPatch';
  readonly patch?: string;
  readonly warnings?: readonly string[];
  readonly auditAnnotations?: Readonly<Record<string, string>>;
}

interface AdmissionReviewOut {
  readonly apiVersion: typeof API_VERSION;
  readonly kind: 'AdmissionReview';
  readonly response: AdmissionResponse;
}

export const OUTCOMES = ['patched', 'denied', 'skipped'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export type ReviewResult = { ok: true; review: AdmissionReviewOut; outcome: Outcome } | { ok: false; reason: string };

/** Kubernetes truncates longer warnings; ours are fixed text well below it. */
const MAX_WARNING = 256;
/** Denial messages are fixed text and field paths; this only bounds the pod-derived port and container names in them. */
const MAX_MESSAGE = 1024;
const UID = /^[A-Za-z0-9-]{1,128}$/;
/** RFC 1123 subdomain, what Kubernetes accepts as a pod name; a generateName may end in `-`. */
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9-])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function review(body: unknown, config: InjectorConfig): ReviewResult {
  if (!isRecord(body) || body.apiVersion !== API_VERSION || body.kind !== 'AdmissionReview') {
    return { ok: false, reason: 'not_admission_review' };
  }
  const request = body.request;
  if (!isRecord(request) || typeof request.uid !== 'string' || !UID.test(request.uid)) {
    return { ok: false, reason: 'no_request_uid' };
  }
  const uid = request.uid;
  const allow = (reason: string, warn: boolean): ReviewResult => ({
    ok: true,
    outcome: 'skipped',
    review: envelope({
      uid,
      allowed: true,
      auditAnnotations: { injection: `skipped: ${reason}` },
      ...(warn ? { warnings: [`toolgate: not injected: ${reason}`.slice(0, MAX_WARNING)] } : {}),
    }),
  });

  const kind = request.kind;
  if (
    !isRecord(kind) ||
    kind.group !== '' ||
    kind.version !== 'v1' ||
    kind.kind !== 'Pod' ||
    (request.subResource ?? '') !== ''
  ) {
    return allow('the request is not for a pod', true);
  }
  if (request.operation !== 'CREATE') return allow('only pod creation is injected', false);

  const plan = planInjection(request.object, config);
  if (plan.kind === 'skip') return allow(plan.reason, false);
  if (plan.kind === 'deny') {
    const message = `toolgate: ${plan.message}`.slice(0, MAX_MESSAGE);
    return {
      ok: true,
      outcome: 'denied',
      review: envelope({
        uid,
        allowed: false,
        status: {
          status: 'Failure',
          code: 422,
          reason: 'Invalid',
          message,
          details: {
            kind: 'pods',
            ...podName(request),
            causes: [{ reason: 'FieldValueInvalid', field: plan.field, message }],
          },
        },
        auditAnnotations: { injection: `denied: ${plan.field}` },
      }),
    };
  }
  return {
    ok: true,
    outcome: 'patched',
    review: envelope({
      uid,
      allowed: true,
      patchType: 'JSONPatch',
      patch: Buffer.from(JSON.stringify(plan.patch)).toString('base64'),
      auditAnnotations: { injection: 'injected' },
      ...(plan.warnings.length > 0
        ? { warnings: plan.warnings.map((w) => `toolgate: ${w}`.slice(0, MAX_WARNING)) }
        : {}),
    }),
  };
}

/**
 * kubectl prints an Invalid status as `The pods "<details.name>" is invalid: <field>: <message>`,
 * so the name is what makes the line readable. Names are not validated yet when mutating
 * webhooks run, so one is passed back only when it is a name Kubernetes could accept; a pod
 * a ReplicaSet creates has only its generateName, which still names the workload.
 */
function podName(request: Record<string, unknown>): { name?: string } {
  const metadata = isRecord(request.object) && isRecord(request.object.metadata) ? request.object.metadata : {};
  const name = [request.name, metadata.name, metadata.generateName].find((n) => typeof n === 'string' && n !== '');
  return typeof name === 'string' && DNS_SUBDOMAIN.test(name) ? { name } : {};
}

function envelope(response: AdmissionResponse): AdmissionReviewOut {
  return { apiVersion: API_VERSION, kind: 'AdmissionReview', response };
}
