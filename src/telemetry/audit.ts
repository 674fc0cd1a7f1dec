import type { IncomingMessage } from 'node:http';
import type { SideEffect } from '../config/policy/raw.ts';
import type { ErrorId } from '../errors.ts';
import { callArguments, type Classified } from '../mcp/classify.ts';
import { methodLabel } from '../mcp/methods.ts';
import { approvalAuditEvent, auditEvent, contractAuditEvent } from './audit-event.ts';
import type { AuditSink } from './audit-sink.ts';
import {
  approvalEvent,
  contractEvent,
  decision,
  on,
  requestClassified,
  requestEnd,
  resultGuard,
  upstreamEnd,
  type ApprovalEvent,
  type ContractEvent,
  type Decision,
  type RequestClassified,
  type RequestEnd,
  type ResultGuardEvent,
  type UpstreamEnd,
} from './channels.ts';
import { guard } from './guard.ts';
import { requestSlot } from './request-slot.ts';
import { auditRecord } from './channels.ts';
import { safeName, safeRequestId } from './span-attributes.ts';

/**
 * Audit from the request lifecycle channels: one event per `tools/call` of a
 * tool that is not read-only, and one per request any policy stage refused;
 * and one per tool contract event (drift, release, lint findings).
 * The event is built and queued when the request ends; writing happens
 * later, off the request path (see audit-sink.ts).
 */

export interface AuditOptions {
  readonly sink: AuditSink;
  readonly upstream: URL;
  /** Pod (host) name, where the decision was taken. */
  readonly pod: string;
  readonly version: string;
  /**
   * The tool's side effect from policy. Undefined (no policy, or no lookup
   * wired) counts as not read-only: an unknown tool is audited.
   */
  readonly sideEffect?: (tool: string) => SideEffect | undefined;
  readonly traceIdOf?: (request: IncomingMessage) => string | undefined;
}

export interface Audit {
  dispose(): void;
}

interface RequestAudit {
  message?: Classified;
  principalId?: string;
  denial?: { readonly stage: string; readonly error: ErrorId | undefined };
  /** The first refusal shadow mode only recorded. */
  wouldDeny?: { readonly stage: string; readonly error: ErrorId | undefined };
  upstreamStatus?: number;
  resultGuard?: Pick<ResultGuardEvent, 'mode' | 'hits'>;
}

export function startAudit(options: AuditOptions): Audit {
  const { sink, sideEffect, traceIdOf } = options;
  const requests = requestSlot<RequestAudit>('toolgate.audit');
  const stateOf = (request: IncomingMessage) => requests.of(request, () => ({}));

  const onClassified = guard('audit', (c: RequestClassified) => {
    stateOf(c.request).message = c.message;
  });
  const onDecision = guard('audit', (d: Decision) => {
    const s = stateOf(d.request);
    if (d.principal !== undefined) s.principalId = d.principal.id;
    if (d.allowed) return;
    if (d.mode === 'audit') s.wouldDeny ??= { stage: d.stage, error: d.error };
    else s.denial ??= { stage: d.stage, error: d.error };
  });
  const onUpstreamEnd = guard('audit', (u: UpstreamEnd) => {
    if (u.status > 0) stateOf(u.request).upstreamStatus = u.status;
  });
  const onEnd = guard('audit', (e: RequestEnd) => {
    if (e.request === undefined) return;
    const s = requests.get(e.request);
    const message = s?.message;
    const isCall = message?.method === 'tools/call' && message.kind === 'request';
    const tool = isCall ? safeName(message.name) : undefined;
    const effect = tool === undefined ? undefined : sideEffect?.(tool);
    if (
      s?.denial === undefined &&
      s?.wouldDeny === undefined &&
      s?.resultGuard === undefined &&
      !(isCall && effect !== 'read_only')
    )
      return;
    const args =
      isCall && message.params !== undefined && Object.hasOwn(message.params, 'arguments')
        ? { present: true as const, value: callArguments(message) }
        : undefined;
    const event = auditEvent({
      timeMs: Date.now(),
      durationMs: e.durationSeconds * 1000,
      operation: message !== undefined ? methodLabel(message.method) : e.method,
      requestId: message === undefined ? undefined : safeRequestId(message.id),
      tool,
      sideEffect: effect,
      principalId: s?.principalId,
      denial: s?.denial,
      wouldDeny: s?.wouldDeny,
      outcome: e.outcome,
      status: e.status,
      upstreamStatus: s?.upstreamStatus,
      resultGuard: s?.resultGuard,
      arguments: args,
      src: { ip: e.request.socket.remoteAddress, port: e.request.socket.remotePort },
      dst: options.upstream,
      pod: options.pod,
      traceId: traceIdOf?.(e.request) ?? incomingTraceId(e.request, message),
      version: options.version,
    });
    record(event);
  });
  const onResultGuard = guard('audit', (g: ResultGuardEvent) => {
    stateOf(g.request).resultGuard = { mode: g.mode, hits: g.hits };
  });
  const onContract = guard('audit', (m: ContractEvent) => {
    record(contractAuditEvent(m, { timeMs: Date.now(), pod: options.pod, version: options.version }));
  });

  const onApproval = guard('audit', (m: ApprovalEvent) => {
    record(approvalAuditEvent(m, { timeMs: Date.now(), pod: options.pod, version: options.version }));
  });

  function record(event: Record<string, unknown>): void {
    const queued = sink.write(JSON.stringify(event));
    if (auditRecord.hasSubscribers) auditRecord.publish({ outcome: queued ? 'queued' : 'dropped' });
  }

  const subscriptions = [
    on(requestClassified, onClassified),
    on(decision, onDecision),
    on(upstreamEnd, onUpstreamEnd),
    on(resultGuard, onResultGuard),
    on(requestEnd, onEnd),
    on(contractEvent, onContract),
    on(approvalEvent, onApproval),
  ];
  for (const s of subscriptions) s.subscribe();
  return {
    dispose() {
      for (const s of subscriptions) s.unsubscribe();
    },
  };
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}/;

/** Without tracing, the caller's own trace id (from `_meta`, else the header) still correlates the event. */
function incomingTraceId(request: IncomingMessage, message: Classified | undefined): string | undefined {
  const meta = message?.params?._meta;
  const fromMeta =
    typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>).traceparent : undefined;
  const header = request.headers.traceparent;
  for (const candidate of [fromMeta, header]) {
    const id = typeof candidate === 'string' ? TRACEPARENT.exec(candidate)?.[1] : undefined;
    if (id !== undefined && !/^0+$/.test(id)) return id;
  }
  return undefined;
}
