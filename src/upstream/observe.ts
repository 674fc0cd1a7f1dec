import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { ErrorId } from '../errors.ts';
import { upstreamEnd, upstreamStart, type UpstreamStart } from '../telemetry/channels.ts';
import { spliceMetaFields } from '../json/meta-splice.ts';

export interface UpstreamTiming {
  /** The upstream's response head arrived. */
  answered(status: number): void;
  /** The exchange is over; `error` when it failed. */
  ended(error?: ErrorId | 'client_closed'): void;
  /** Fields subscribers asked to add to the body's `params._meta` (trace context). */
  readonly metaFields: Readonly<Record<string, string>> | undefined;
}

/**
 * One upstream exchange as the channels see it: the start message
 * subscribers edit, and the timing the forwarder reports to. One object with
 * its methods on the prototype, since it exists for every forwarded request
 * while anyone listens.
 */
class UpstreamObservation implements UpstreamStart, UpstreamTiming {
  readonly request: IncomingMessage;
  readonly #headers: string[];
  readonly #began = performance.now();
  #status = 0;
  metaFields: Record<string, string> | undefined = undefined;

  constructor(request: IncomingMessage, headers: string[]) {
    this.request = request;
    this.#headers = headers;
  }

  // Replaces a field of the same name: a forwarded traceparent next to ours would make both invalid.
  addHeader(name: string, value: string): void {
    const headers = this.#headers;
    const lower = name.toLowerCase();
    for (let i = headers.length - 2; i >= 0; i -= 2) {
      const h = headers[i] as string;
      if (h.length === lower.length && h.toLowerCase() === lower) headers.splice(i, 2);
    }
    headers.push(name, value);
  }

  addMetaField(name: string, value: string): void {
    (this.metaFields ??= {})[name] = value;
  }

  answered(status: number): void {
    this.#status = status;
  }

  ended(error?: ErrorId | 'client_closed'): void {
    if (!upstreamEnd.hasSubscribers) return;
    // One shape whether or not it failed: no spread object on every forwarded request.
    upstreamEnd.publish({
      request: this.request,
      status: this.#status,
      error,
      durationSeconds: (performance.now() - this.#began) / 1000,
    });
  }
}

/**
 * Announces an upstream request on the telemetry channels, letting
 * subscribers set headers and `_meta` fields (trace context) before it is
 * sent. Undefined, and free, when nobody listens.
 */
export function announceUpstream(request: IncomingMessage, headers: string[]): UpstreamTiming | undefined {
  if (!upstreamStart.hasSubscribers && !upstreamEnd.hasSubscribers) return undefined;
  const exchange = new UpstreamObservation(request, headers);
  if (upstreamStart.hasSubscribers) upstreamStart.publish(exchange);
  return exchange;
}

/**
 * The body to send: with the requested `_meta` fields spliced in, or as it
 * came when none were asked for or the splice cannot be done safely.
 */
export function withMetaFields(body: Buffer, timing: UpstreamTiming | undefined): Buffer {
  const fields = timing?.metaFields;
  return fields === undefined ? body : (spliceMetaFields(body, fields) ?? body);
}
