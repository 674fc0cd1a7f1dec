import { randomUUID } from 'node:crypto';
import { canonicalize, sha256Hex } from '../json/canonical.ts';
import type { SideEffect } from '../config/policy/raw.ts';
import type { ApprovalEvent, ContractEvent } from './channels.ts';
import { errors, type ErrorId } from '../errors.ts';

/**
 * One audit record as an OCSF API Activity event (class 6003). Built only
 * from identifiers, codes, sizes, timings and a digest: the arguments are
 * reduced to the SHA-256 of their canonical JSON (RFC 8785) and its length,
 * never echoed.
 */

const OCSF_VERSION = '1.4.0';

export interface AuditInput {
  readonly timeMs: number;
  readonly durationMs: number;
  /** Bounded method label (a known MCP method, `other`, `unclassified`, `http_get`, …). */
  readonly operation: string;
  readonly requestId: string | undefined;
  readonly tool: string | undefined;
  readonly sideEffect: SideEffect | undefined;
  readonly principalId: string | undefined;
  /** The first stage that refused, with its code; absent when every stage allowed. */
  readonly denial: { readonly stage: string; readonly error: ErrorId | undefined } | undefined;
  /** A refusal shadow mode recorded instead of enforcing. */
  readonly wouldDeny?: { readonly stage: string; readonly error: ErrorId | undefined } | undefined;
  /** `forwarded`, `client_closed`, or a registry error code. */
  readonly outcome: string;
  readonly status: number;
  readonly upstreamStatus: number | undefined;
  /** What the result guard did (or in audit mode would have done): ids and counts only. */
  readonly resultGuard?:
    | {
        readonly mode: 'enforce' | 'audit';
        readonly hits: readonly { readonly detector: string; readonly action: string; readonly count: number }[];
      }
    | undefined;
  readonly arguments: { readonly present: true; readonly value: unknown } | undefined;
  readonly src: { readonly ip: string | undefined; readonly port: number | undefined };
  readonly dst: URL;
  readonly pod: string;
  readonly traceId: string | undefined;
  readonly version: string;
}

const READS = new Set([
  'tools/list',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'prompts/list',
  'prompts/get',
  'toolgate/discover',
]);

export function auditEvent(a: AuditInput): Record<string, unknown> {
  const read = READS.has(a.operation);
  const activityId = read ? 2 : 99;
  const activityName = read ? 'Read' : a.operation === 'tools/call' ? 'Invoke' : 'Other';
  const failed = a.denial !== undefined || (a.outcome !== 'forwarded' && a.outcome !== 'client_closed');
  const code =
    a.denial?.error !== undefined
      ? errors[a.denial.error].code
      : Object.hasOwn(errors, a.outcome)
        ? errors[a.outcome as ErrorId].code
        : a.outcome;
  const digest = a.arguments === undefined ? undefined : canonicalize(a.arguments.value);
  const dstPort = Number(a.dst.port) || (a.dst.protocol === 'https:' ? 443 : 80);
  return {
    class_uid: 6003,
    class_name: 'API Activity',
    category_uid: 6,
    category_name: 'Application Activity',
    activity_id: activityId,
    activity_name: activityName,
    type_uid: 6003 * 100 + activityId,
    type_name: `API Activity: ${activityName}`,
    time: a.timeMs,
    start_time: a.timeMs - a.durationMs,
    end_time: a.timeMs,
    duration: Math.round(a.durationMs),
    severity_id: a.denial !== undefined ? 3 : 1,
    severity: a.denial !== undefined ? 'Medium' : 'Informational',
    status_id: failed ? 2 : 1,
    status: failed ? 'Failure' : 'Success',
    status_code: code,
    status_detail: a.denial !== undefined ? `denied at ${a.denial.stage}: ${code}` : a.outcome,
    actor: {
      ...(a.principalId !== undefined && { user: { uid: a.principalId } }),
      ...(a.denial !== undefined && { authorizations: [{ decision: 'deny', policy: { name: a.denial.stage } }] }),
      ...(a.denial === undefined &&
        a.wouldDeny !== undefined && {
          authorizations: [{ decision: 'audit_deny', policy: { name: a.wouldDeny.stage } }],
        }),
    },
    api: {
      operation: a.operation,
      service: { name: 'mcp' },
      ...(a.requestId !== undefined && { request: { uid: a.requestId } }),
      response: { code: a.status, ...(failed && { error: code }) },
    },
    ...(a.tool !== undefined && { resources: [{ name: a.tool, type: 'mcp_tool' }] }),
    src_endpoint: {
      ...(a.src.ip !== undefined && { ip: a.src.ip }),
      ...(a.src.port !== undefined && { port: a.src.port }),
    },
    dst_endpoint: { hostname: a.dst.hostname, port: dstPort, svc_name: 'mcp' },
    ...producedBy(a.pod, a.version, a.traceId),
    unmapped: {
      ...(a.traceId !== undefined && { trace_id: a.traceId }),
      ...(a.sideEffect !== undefined && { side_effect: a.sideEffect }),
      ...(a.upstreamStatus !== undefined && { upstream_status: a.upstreamStatus }),
      ...(a.resultGuard !== undefined && {
        result_guard: {
          mode: a.resultGuard.mode,
          hits: a.resultGuard.hits.map((h) => ({ detector: h.detector, action: h.action, count: h.count })),
        },
      }),
      ...(a.wouldDeny !== undefined && {
        would_deny: true,
        would_deny_stage: a.wouldDeny.stage,
        ...(a.wouldDeny.error !== undefined && { would_deny_code: errors[a.wouldDeny.error].code }),
      }),
      ...(digest !== undefined &&
        digest.ok && { arguments_sha256: sha256Hex(digest.text), arguments_bytes: Buffer.byteLength(digest.text) }),
    },
  };
}

/** When and where an event other than a request's was made. */
interface EventMeta {
  readonly timeMs: number;
  readonly pod: string;
  readonly version: string;
}

/** The OCSF device and metadata every toolgate event carries: this pod, this build, a fresh event id. */
function producedBy(pod: string, version: string, traceId?: string): Record<string, unknown> {
  return {
    device: { hostname: pod, type_id: 0 },
    metadata: {
      uid: randomUUID(),
      version: OCSF_VERSION,
      log_name: 'toolgate_audit',
      product: { name: 'toolgate', vendor_name: 'toolgate', version },
      ...(traceId !== undefined && { correlation_uid: traceId }),
    },
  };
}

/**
 * A tool contract event (drift, unknown tool, release, lint findings) as an
 * OCSF Detection Finding (class 2004): the tool, both digests, and which
 * fields and pointers changed or which rules fired; never the texts.
 */
export function contractAuditEvent(e: ContractEvent, meta: EventMeta): Record<string, unknown> {
  const activityId = e.kind === 'release' ? 3 : 1;
  const severe = e.action === 'quarantine';
  return {
    class_uid: 2004,
    class_name: 'Detection Finding',
    category_uid: 2,
    category_name: 'Findings',
    activity_id: activityId,
    activity_name: activityId === 3 ? 'Close' : 'Create',
    type_uid: 2004 * 100 + activityId,
    time: meta.timeMs,
    severity_id: severe ? 4 : e.kind === 'release' ? 1 : 3,
    severity: severe ? 'High' : e.kind === 'release' ? 'Informational' : 'Medium',
    status_code: e.kind === 'release' ? 'released' : `contract_${e.kind}`,
    finding_info: { uid: randomUUID(), title: `tool contract ${e.kind}`, types: [e.kind] },
    resources: [{ name: e.tool, type: 'mcp_tool' }],
    ...producedBy(meta.pod, meta.version),
    unmapped: {
      action: e.action,
      digest: e.digest,
      ...(e.approvedDigest !== undefined && { approved_digest: e.approvedDigest }),
      ...(e.fields !== undefined && { changed_fields: e.fields }),
      ...(e.findings !== undefined && { findings: e.findings }),
    },
  };
}

const APPROVAL_ACTIVITY = { requested: 1, approved: 2, denied: 2, expired: 3, spent: 3, unsettled: 3 } as const;

/**
 * An approval step as an OCSF Authorization event: who asked, for which tool
 * and argument digest, who decided and through which door. Never an argument
 * value: the digest is what binds the approval.
 */
export function approvalAuditEvent(e: ApprovalEvent, meta: EventMeta): Record<string, unknown> {
  const activityId = APPROVAL_ACTIVITY[e.event];
  return {
    class_uid: 3003,
    class_name: 'Authorize Session',
    category_uid: 3,
    category_name: 'Identity & Access Management',
    activity_id: activityId,
    activity_name: `approval_${e.event}`,
    type_uid: 3003 * 100 + activityId,
    time: meta.timeMs,
    severity_id: e.event === 'denied' || e.event === 'unsettled' ? 3 : 1,
    severity: e.event === 'denied' || e.event === 'unsettled' ? 'Medium' : 'Informational',
    status_code: `approval_${e.event}`,
    actor: { user: { uid: e.principal } },
    resources: [{ name: e.tool, type: 'mcp_tool' }],
    ...producedBy(meta.pod, meta.version),
    unmapped: {
      approval_id: e.approvalId,
      arguments_digest: e.argumentsDigest,
      policy_revision: e.policyRevision,
      ...(e.approver !== undefined && { approver: e.approver }),
      ...(e.via !== undefined && { via: e.via }),
    },
  };
}
