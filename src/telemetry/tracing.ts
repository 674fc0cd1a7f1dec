import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import { TraceState, parseTraceParent } from '@opentelemetry/core';
import { errors, type ErrorId } from '../errors.ts';
import type { Classified } from '../mcp/classify.ts';
import { requestPath } from '../mcp/request-path.ts';
import {
  decision,
  requestClassified,
  requestEnd,
  requestStart,
  upstreamEnd,
  upstreamStart,
  type Decision,
  type RequestClassified,
  type RequestEnd,
  type RequestStart,
  type UpstreamEnd,
  type UpstreamStart,
} from './channels.ts';
import {
  approvalEvent,
  discovery,
  on,
  resultGuard,
  type ApprovalEvent,
  type DiscoveryDone,
  type ResultGuardEvent,
} from './channels.ts';
import { keywordLabels } from './keywords.ts';
import { guard } from './guard.ts';
import { requestSlot } from './request-slot.ts';
import { addClientAttributes, serverSpanAttributes, serverSpanName } from './span-attributes.ts';

/**
 * Spans from the request lifecycle channels: one server span per request
 * (named after the MCP message once it is classified), a child per policy
 * decision, discovery search and upstream exchange. Trace context comes from
 * `params._meta` when the message carries it (the MCP convention), else from
 * the HTTP headers, and goes upstream in both places.
 *
 * The server span can only be created once its parent is known, which for a
 * POST is after the body is read, while authentication has already decided:
 * decisions that arrive earlier are kept and become children with their own
 * timings when the span exists.
 *
 * This runs for every request while tracing is on, so it does no work a
 * span will not keep: attributes are computed only for recording spans (no
 * built-in sampler reads start attributes, and setting them once skips the
 * SDK's two sanitising copies), and trace context is parsed and written
 * directly rather than through a propagator's context and carrier objects.
 *
 * An unsampled request (most of them, at the usual 1–10%) gets its server
 * span for the sampling decision and the trace id, and nothing more: every
 * built-in sampler gives a child of a span it did not record no recording
 * either (parent-based ones by rule, ratio ones by the shared trace id), so
 * no child span is made, and the upstream is handed the server span's own
 * context in the `traceparent` header. The body is left byte for byte: its
 * `_meta` is rewritten only for a sampled trace, where an upstream that reads
 * trace context there must continue from toolgate's span.
 */

export interface TracingOptions {
  readonly tracer: Tracer;
  /** The upstream origin, for the client span's server.address/port. */
  readonly upstream: URL;
  readonly mcpPath: string;
}

export interface Tracing {
  /** The trace a request belongs to, once its span exists. */
  readonly traceIdOf: (request: IncomingMessage) => string | undefined;
  dispose(): void;
}

interface Early {
  readonly decision: Decision;
  readonly endMs: number;
}

class RequestTrace {
  readonly startMs: number;
  span: Span | undefined = undefined;
  /** The server span's context once it exists; `null` when it does not record, so it has no children. */
  context: Context | null | undefined = undefined;
  message: Classified | undefined = undefined;
  early: Early[] | undefined = undefined;
  upstream: Span | undefined = undefined;
  constructor(startMs: number) {
    this.startMs = startMs;
  }
}

const TIME_ORIGIN = performance.timeOrigin;
const now = () => TIME_ORIGIN + performance.now();

/** Outcomes that are the caller's own doing, not a failure of the exchange. */
const CALLER_ENDED = new Set(['client_closed', 'aborted']);

export function subscribeTracing(options: TracingOptions): Tracing {
  const { tracer, mcpPath } = options;
  const port = Number(options.upstream.port) || (options.upstream.protocol === 'https:' ? 443 : 80);
  const upstreamHost = options.upstream.hostname;
  const traces = requestSlot<RequestTrace>('toolgate.trace');
  const newTrace = () => new RequestTrace(now());
  const stateOf = (request: IncomingMessage): RequestTrace => traces.of(request, newTrace);

  const open = (request: IncomingMessage, t: RequestTrace): Context | null => {
    if (t.context !== undefined) return t.context;
    const m = t.message;
    const parent = parentContext(request, m);
    const name =
      m !== undefined
        ? serverSpanName(m)
        : requestPath(request) === mcpPath
          ? `${request.method} ${mcpPath}`
          : `${request.method}`;
    const span = tracer.startSpan(name, { kind: SpanKind.SERVER, startTime: t.startMs }, parent.context);
    if (span.isRecording()) {
      const attributes =
        m !== undefined
          ? serverSpanAttributes(m, request)
          : addClientAttributes({ 'http.request.method': request.method ?? 'other' }, request);
      attributes['toolgate.trace.parent'] = parent.source;
      span.setAttributes(attributes);
    }
    t.span = span;
    if (!span.isRecording()) {
      t.early = undefined;
      t.context = null;
      return null;
    }
    t.context = trace.setSpan(ROOT_CONTEXT, span);
    if (t.early !== undefined) {
      for (const e of t.early) decisionSpan(t.context, e.decision, e.endMs);
      t.early = undefined;
    }
    return t.context;
  };

  const decisionSpan = (context: Context, d: Decision, endMs: number) => {
    const span = tracer.startSpan(
      `policy ${d.stage}`,
      { kind: SpanKind.INTERNAL, startTime: endMs - d.durationSeconds * 1000 },
      context,
    );
    if (span.isRecording()) {
      const attributes: Attributes = {
        'toolgate.policy.stage': d.stage,
        'toolgate.policy.decision': d.allowed ? 'allow' : 'deny',
      };
      if (d.error !== undefined) attributes['error.type'] = errors[d.error].code;
      if (d.keywords !== undefined) attributes['toolgate.validation.keywords'] = keywordLabels(d.keywords);
      if (d.principal !== undefined) attributes['user.id'] = d.principal.id;
      if (d.rule !== undefined) attributes['toolgate.policy.rule'] = d.rule;
      if (d.mode === 'audit') {
        attributes['toolgate.policy.mode'] = 'audit';
        attributes['toolgate.policy.would_deny'] = true;
      }
      span.setAttributes(attributes);
      if (!d.allowed && d.mode !== 'audit')
        span.setStatus({ code: SpanStatusCode.ERROR, message: d.error === undefined ? 'deny' : errors[d.error].code });
    }
    span.end(endMs);
  };

  const onStart = guard('tracing', (m: RequestStart) => {
    traces.set(m.request, newTrace());
  });

  const onClassified = guard('tracing', ({ request, message }: RequestClassified) => {
    const t = stateOf(request);
    if (t.context !== undefined) return;
    t.message = message;
    open(request, t);
  });

  const onDecision = guard('tracing', (d: Decision) => {
    const t = stateOf(d.request);
    if (t.context === null) return;
    if (d.principal !== undefined && t.span !== undefined) t.span.setAttribute('user.id', d.principal.id);
    if (t.context !== undefined) decisionSpan(t.context, d, now());
    else (t.early ??= []).push({ decision: d, endMs: now() });
  });

  // An approval step on a call is an event on its server span: ids and digests, never arguments.
  const onApproval = guard('tracing', (a: ApprovalEvent) => {
    const span = a.request === undefined ? undefined : traces.get(a.request)?.span;
    if (span === undefined || !span.isRecording()) return;
    span.addEvent(`toolgate.approval.${a.event}`, {
      'toolgate.approval.id': a.approvalId,
      'toolgate.approval.arguments_digest': a.argumentsDigest,
    });
  });

  const onResultGuard = guard('tracing', (g: ResultGuardEvent) => {
    const span = traces.get(g.request)?.span;
    if (span === undefined || !span.isRecording()) return;
    for (const h of g.hits) {
      span.addEvent('toolgate.result_guard', {
        'toolgate.result_guard.detector': h.detector,
        'toolgate.result_guard.action': h.action,
        'toolgate.result_guard.count': h.count,
        'toolgate.result_guard.mode': g.mode,
      });
    }
  });

  const onDiscovery = guard('tracing', (d: DiscoveryDone) => {
    const t = traces.get(d.request);
    if (t === undefined) return;
    const parent = open(d.request, t);
    if (parent === null) return;
    const endMs = now();
    const span = tracer.startSpan(
      'discover',
      { kind: SpanKind.INTERNAL, startTime: endMs - d.durationSeconds * 1000 },
      parent,
    );
    if (span.isRecording())
      span.setAttributes({ 'toolgate.discovery.results': d.results, 'toolgate.discovery.total': d.total });
    span.end(endMs);
  });

  const onUpstreamStart = guard('tracing', (u: UpstreamStart) => {
    const t = stateOf(u.request);
    const parent = open(u.request, t);
    let sc: SpanContext;
    if (parent === null) {
      sc = (t.span as Span).spanContext();
    } else {
      const method = u.request.method ?? 'other';
      const span = tracer.startSpan(method, { kind: SpanKind.CLIENT }, parent);
      t.upstream = span;
      if (span.isRecording()) {
        span.setAttribute('server.address', upstreamHost);
        span.setAttribute('server.port', port);
        span.setAttribute('http.request.method', method);
      }
      sc = span.spanContext();
    }
    if (!trace.isSpanContextValid(sc)) return;
    const traceparent = formatTraceparent(sc);
    // A tracestate the client sent belongs to its own span; without one of ours it is blanked, not left stale.
    const tracestate = sc.traceState?.serialize() ?? '';
    u.addHeader('traceparent', traceparent);
    if (tracestate !== '' || u.request.headers.tracestate !== undefined) u.addHeader('tracestate', tracestate);
    if ((sc.traceFlags & TraceFlags.SAMPLED) === 0) return;
    const msg = t.message;
    if (u.addMetaField !== undefined && msg !== undefined && (msg.kind === 'request' || msg.kind === 'notification')) {
      u.addMetaField('traceparent', traceparent);
      const meta = msg.params?._meta as Record<string, unknown> | undefined;
      if (tracestate !== '' || (typeof meta === 'object' && meta !== null && 'tracestate' in meta))
        u.addMetaField('tracestate', tracestate);
    }
  });

  const onUpstreamEnd = guard('tracing', (u: UpstreamEnd) => {
    const span = traces.get(u.request)?.upstream;
    if (span === undefined) return;
    if (span.isRecording()) {
      if (u.status > 0) span.setAttribute('http.response.status_code', u.status);
      const failure = u.error !== undefined ? errorType(u.error) : u.status >= 500 ? String(u.status) : undefined;
      if (failure !== undefined) {
        span.setAttribute('error.type', failure);
        if (u.error !== 'client_closed') span.setStatus({ code: SpanStatusCode.ERROR, message: failure });
      }
    }
    span.end();
  });

  const onEnd = guard('tracing', (e: RequestEnd) => {
    if (e.request === undefined) return;
    const t = traces.get(e.request);
    if (t === undefined) return;
    open(e.request, t);
    const span = t.span as Span;
    if (span.isRecording()) {
      span.setAttribute('toolgate.outcome', e.outcome);
      if (e.status > 0) span.setAttribute('http.response.status_code', e.status);
      if (e.outcome !== 'forwarded') {
        const type = errorType(e.outcome);
        span.setAttribute('error.type', type);
        const def = errors[e.outcome as ErrorId] as (typeof errors)[ErrorId] | undefined;
        if (def !== undefined) span.setAttribute('rpc.response.status_code', String(def.rpcCode));
        if (!CALLER_ENDED.has(e.outcome)) span.setStatus({ code: SpanStatusCode.ERROR, message: type });
      }
    }
    span.end();
  });

  const subscriptions = [
    on(requestStart, onStart),
    on(requestClassified, onClassified),
    on(decision, onDecision),
    on(discovery, onDiscovery),
    on(approvalEvent, onApproval),
    on(resultGuard, onResultGuard),
    on(upstreamStart, onUpstreamStart),
    on(upstreamEnd, onUpstreamEnd),
    on(requestEnd, onEnd),
  ];
  for (const s of subscriptions) s.subscribe();
  return {
    traceIdOf: (request) => traces.get(request)?.span?.spanContext().traceId,
    dispose() {
      for (const s of subscriptions) s.unsubscribe();
    },
  };
}

/** The registry's public code for an error id; other outcomes as they are (they are closed sets too). */
function errorType(outcome: string): string {
  return Object.hasOwn(errors, outcome) ? errors[outcome as ErrorId].code : outcome;
}

/** W3C traceparent, version 00, with the flags as two hex digits. */
function formatTraceparent(sc: SpanContext): string {
  const flags = sc.traceFlags & 0xff;
  return `00-${sc.traceId}-${sc.spanId}-${flags < 0x10 ? '0' : ''}${flags.toString(16)}`;
}

interface Parent {
  readonly context: Context;
  readonly source: 'meta' | 'header' | 'none';
}

const NO_PARENT: Parent = { context: ROOT_CONTEXT, source: 'none' };

/** The remote parent from `_meta`, else the headers, with the W3C propagator's rules (first traceparent, tracestates joined). */
function parentContext(request: IncomingMessage, message: Classified | undefined): Parent {
  const meta = message?.params?._meta;
  if (typeof meta === 'object' && meta !== null) {
    const { traceparent, tracestate } = meta as Record<string, unknown>;
    if (typeof traceparent === 'string') {
      const sc = remoteSpanContext(traceparent, typeof tracestate === 'string' ? tracestate : undefined);
      if (sc !== undefined) return { context: trace.setSpanContext(ROOT_CONTEXT, sc), source: 'meta' };
    }
  }
  const header = request.headers.traceparent;
  const traceparent = Array.isArray(header) ? header[0] : header;
  if (traceparent === undefined || traceparent === '') return NO_PARENT;
  const state = request.headers.tracestate;
  const sc = remoteSpanContext(traceparent, Array.isArray(state) ? state.join(',') : state);
  return sc === undefined ? NO_PARENT : { context: trace.setSpanContext(ROOT_CONTEXT, sc), source: 'header' };
}

function remoteSpanContext(traceparent: string, tracestate: string | undefined): SpanContext | undefined {
  const parsed = parseTraceParent(traceparent);
  if (parsed === null) return undefined;
  const sc: SpanContext = {
    traceId: parsed.traceId,
    spanId: parsed.spanId,
    traceFlags: parsed.traceFlags,
    isRemote: true,
  };
  if (tracestate !== undefined && tracestate !== '') sc.traceState = new TraceState(tracestate);
  return sc;
}
