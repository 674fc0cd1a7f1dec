import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { ErrorId } from '../errors.ts';
import { upstreamEnd, upstreamStart, type UpstreamStart } from '../telemetry/channels.ts';
import { spliceMetaFields } from '../telemetry/meta-splice.ts';

export interface UpstreamTiming {
  /** The upstream's response head arrived. */
  answered(status: number): void;
  /** The exchange is over; `error` when it failed. */
  ended(error?: ErrorId | 'client_closed'): void;
  /** Fields subscribers asked to add to the body's `params._meta` (trace context). */
  readonly metaFields: Readonly<Record<string, string>> | undefined;
}

/**
 * Announces an upstream request on the telemetry channels, letting
 * subscribers set headers and `_meta` fields (trace context) before it is
 * sent. Undefined, and free, when nobody listens.
 */
export function announceUpstream(request: IncomingMessage, headers: string[]): UpstreamTiming | undefined {
  if (!upstreamStart.hasSubscribers && !upstreamEnd.hasSubscribers) return undefined;
  const began = performance.now();
  let status = 0;
  let metaFields: Record<string, string> | undefined;
  if (upstreamStart.hasSubscribers) {
    const message: UpstreamStart = {
      request,
      // Replaces a field of the same name: a forwarded traceparent next to ours would make both invalid.
      addHeader(name: string, value: string) {
        const lower = name.toLowerCase();
        for (let i = headers.length - 2; i >= 0; i -= 2) {
          if ((headers[i] as string).toLowerCase() === lower) headers.splice(i, 2);
        }
        headers.push(name, value);
      },
      addMetaField(name: string, value: string) {
        (metaFields ??= {})[name] = value;
      },
    };
    upstreamStart.publish(message);
  }
  return {
    metaFields,
    answered(s) {
      status = s;
    },
    ended(error) {
      if (!upstreamEnd.hasSubscribers) return;
      upstreamEnd.publish({ request, status, ...(error !== undefined && { error }), durationSeconds: (performance.now() - began) / 1000 });
    },
  };
}

/**
 * The body to send: with the requested `_meta` fields spliced in, or as it
 * came when none were asked for or the splice cannot be done safely.
 */
export function withMetaFields(body: Buffer, timing: UpstreamTiming | undefined): Buffer {
  const fields = timing?.metaFields;
  return fields === undefined ? body : (spliceMetaFields(body, fields) ?? body);
}
