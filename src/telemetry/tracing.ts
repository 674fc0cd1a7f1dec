import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, defaultTextMapSetter, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { errors, type ErrorId } from '../errors.ts';
import type { Classified } from '../http/classify.ts';
import { decision, requestClassified, requestEnd, requestStart, upstreamEnd, upstreamStart, type Decision, type RequestClassified, type RequestEnd, type RequestStart, type UpstreamEnd, type UpstreamStart } from './channels.ts';
import { discovery, type DiscoveryDone } from './discovery-channel.ts';
import { keywordLabels } from './keywords.ts';
import { guard } from './guard.ts';
import { clientAttributes, serverSpanAttributes, serverSpanName } from './span-attributes.ts';

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
 */

export interface TracingOptions {
  readonly tracer: Tracer;
  /** The upstream origin, for the client span's server.address/port. */
  readonly upstream: URL;
  readonly mcpPath: string;
}

export interface Tracing {
  /** The trace a request belongs to, once its span exists. */
  traceIdOf(request: IncomingMessage): string | undefined;
  dispose(): void;
}

interface Early {
  readonly decision: Decision;
  readonly endMs: number;
}

interface RequestTrace {
  readonly startMs: number;
  span?: Span;
  context?: Context;
  message?: Classified;
  early?: Early[];
  upstream?: Span;
}

const propagator = new W3CTraceContextPropagator();
const now = () => performance.timeOrigin + performance.now();

/** Outcomes that are the caller's own doing, not a failure of the exchange. */
const CALLER_ENDED = new Set(['client_closed', 'aborted']);

export function subscribeTracing(options: TracingOptions): Tracing {
  const { tracer, mcpPath } = options;
  const port = Number(options.upstream.port) || (options.upstream.protocol === 'https:' ? 443 : 80);
  const upstreamAttributes: Attributes = { 'server.address': options.upstream.hostname, 'server.port': port };
  const traces = new WeakMap<IncomingMessage, RequestTrace>();

  const stateOf = (request: IncomingMessage): RequestTrace => {
    let t = traces.get(request);
    if (t === undefined) traces.set(request, (t = { startMs: now() }));
    return t;
  };

  const open = (request: IncomingMessage, t: RequestTrace): Context => {
    if (t.context !== undefined) return t.context;
    const m = t.message;
    const parent = parentContext(request, m);
    const path = (request.url ?? '/').split('?', 1)[0];
    const name = m !== undefined ? serverSpanName(m) : path === mcpPath ? `${request.method} ${mcpPath}` : `${request.method}`;
    const attributes = m !== undefined ? serverSpanAttributes(m, request) : { 'http.request.method': request.method ?? 'other', ...clientAttributes(request) };
    attributes['toolgate.trace.parent'] = parent.source;
    t.span = tracer.startSpan(name, { kind: SpanKind.SERVER, startTime: t.startMs, attributes }, parent.context);
    t.context = trace.setSpan(ROOT_CONTEXT, t.span);
    for (const e of t.early ?? []) decisionSpan(t.context, e.decision, e.endMs);
    t.early = undefined;
    return t.context;
  };

  const decisionSpan = (context: Context, d: Decision, endMs: number) => {
    const attributes: Attributes = { 'toolgate.policy.stage': d.stage, 'toolgate.policy.decision': d.allowed ? 'allow' : 'deny' };
    if (d.error !== undefined) attributes['error.type'] = errors[d.error].code;
    if (d.keywords !== undefined) attributes['toolgate.validation.keywords'] = keywordLabels(d.keywords);
    if (d.principal !== undefined) attributes['user.id'] = d.principal.id;
    const span = tracer.startSpan(`policy ${d.stage}`, { kind: SpanKind.INTERNAL, startTime: endMs - d.durationSeconds * 1000, attributes }, context);
    if (!d.allowed) span.setStatus({ code: SpanStatusCode.ERROR, message: d.error === undefined ? 'deny' : errors[d.error].code });
    span.end(endMs);
  };

  const onStart = guard('tracing', (m: unknown) => {
    traces.set((m as RequestStart).request, { startMs: now() });
  });

  const onClassified = guard('tracing', (m: unknown) => {
    const { request, message } = m as RequestClassified;
    const t = stateOf(request);
    if (t.context !== undefined) return;
    t.message = message;
    open(request, t);
  });

  const onDecision = guard('tracing', (m: unknown) => {
    const d = m as Decision;
    const t = stateOf(d.request);
    if (d.principal !== undefined && t.span !== undefined) t.span.setAttribute('user.id', d.principal.id);
    if (t.context !== undefined) decisionSpan(t.context, d, now());
    else (t.early ??= []).push({ decision: d, endMs: now() });
  });

  const onDiscovery = guard('tracing', (m: unknown) => {
    const d = m as DiscoveryDone;
    const t = traces.get(d.request);
    if (t === undefined) return;
    const endMs = now();
    const span = tracer.startSpan('discover', {
      kind: SpanKind.INTERNAL,
      startTime: endMs - d.durationSeconds * 1000,
      attributes: { 'toolgate.discovery.results': d.results, 'toolgate.discovery.total': d.total },
    }, open(d.request, t));
    span.end(endMs);
  });

  const onUpstreamStart = guard('tracing', (m: unknown) => {
    const u = m as UpstreamStart;
    const t = stateOf(u.request);
    const parent = open(u.request, t);
    const method = u.request.method ?? 'other';
    t.upstream = tracer.startSpan(method, { kind: SpanKind.CLIENT, attributes: { ...upstreamAttributes, 'http.request.method': method } }, parent);
    const carrier: Record<string, string> = {};
    propagator.inject(trace.setSpan(ROOT_CONTEXT, t.upstream), carrier, defaultTextMapSetter);
    const traceparent = carrier.traceparent;
    if (traceparent === undefined) return;
    // A tracestate the client sent belongs to its own span; without one of ours it is blanked, not left stale.
    const tracestate = carrier.tracestate ?? '';
    u.addHeader('traceparent', traceparent);
    if (tracestate !== '' || u.request.headers.tracestate !== undefined) u.addHeader('tracestate', tracestate);
    const msg = t.message;
    if (u.addMetaField !== undefined && msg !== undefined && (msg.kind === 'request' || msg.kind === 'notification')) {
      u.addMetaField('traceparent', traceparent);
      const meta = msg.params?._meta as Record<string, unknown> | undefined;
      if (tracestate !== '' || (typeof meta === 'object' && meta !== null && 'tracestate' in meta)) u.addMetaField('tracestate', tracestate);
    }
  });

  const onUpstreamEnd = guard('tracing', (m: unknown) => {
    const u = m as UpstreamEnd;
    const span = traces.get(u.request)?.upstream;
    if (span === undefined) return;
    if (u.status > 0) span.setAttribute('http.response.status_code', u.status);
    const failure = u.error !== undefined ? errorType(u.error) : u.status >= 500 ? String(u.status) : undefined;
    if (failure !== undefined) {
      span.setAttribute('error.type', failure);
      if (u.error !== 'client_closed') span.setStatus({ code: SpanStatusCode.ERROR, message: failure });
    }
    span.end();
  });

  const onEnd = guard('tracing', (m: unknown) => {
    const e = m as RequestEnd;
    if (e.request === undefined) return;
    const t = traces.get(e.request);
    if (t === undefined) return;
    open(e.request, t);
    const span = t.span as Span;
    span.setAttribute('toolgate.outcome', e.outcome);
    if (e.status > 0) span.setAttribute('http.response.status_code', e.status);
    if (e.outcome !== 'forwarded') {
      const type = errorType(e.outcome);
      span.setAttribute('error.type', type);
      const def = errors[e.outcome as ErrorId] as (typeof errors)[ErrorId] | undefined;
      if (def !== undefined) span.setAttribute('rpc.response.status_code', String(def.rpcCode));
      if (!CALLER_ENDED.has(e.outcome)) span.setStatus({ code: SpanStatusCode.ERROR, message: type });
    }
    span.end();
  });

  const subscriptions = [
    [requestStart, onStart],
    [requestClassified, onClassified],
    [decision, onDecision],
    [discovery, onDiscovery],
    [upstreamStart, onUpstreamStart],
    [upstreamEnd, onUpstreamEnd],
    [requestEnd, onEnd],
  ] as const;
  for (const [c, f] of subscriptions) c.subscribe(f);
  return {
    traceIdOf: (request) => traces.get(request)?.span?.spanContext().traceId,
    dispose() {
      for (const [c, f] of subscriptions) c.unsubscribe(f);
    },
  };
}

/** The registry's public code for an error id; other outcomes as they are (they are closed sets too). */
function errorType(outcome: string): string {
  return Object.hasOwn(errors, outcome) ? errors[outcome as ErrorId].code : outcome;
}

interface Parent {
  readonly context: Context;
  readonly source: 'meta' | 'header' | 'none';
}

function parentContext(request: IncomingMessage, message: Classified | undefined): Parent {
  const meta = message?.params?._meta;
  if (typeof meta === 'object' && meta !== null) {
    const { traceparent, tracestate } = meta as Record<string, unknown>;
    if (typeof traceparent === 'string') {
      const carrier = typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent };
      const context = propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
      if (trace.getSpanContext(context) !== undefined) return { context, source: 'meta' };
    }
  }
  const context = propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
  return trace.getSpanContext(context) !== undefined ? { context, source: 'header' } : { context: ROOT_CONTEXT, source: 'none' };
}
