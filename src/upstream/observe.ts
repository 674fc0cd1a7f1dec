import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { ErrorId } from '../errors.ts';
import { upstreamEnd, upstreamStart } from '../telemetry/channels.ts';

export interface UpstreamTiming {
  /** The upstream's response head arrived. */
  answered(status: number): void;
  /** The exchange is over; `error` when it failed. */
  ended(error?: ErrorId | 'client_closed'): void;
}

/**
 * Announces an upstream request on the telemetry channels, letting
 * subscribers add headers (trace context) before it is sent. Undefined, and
 * free, when nobody listens.
 */
export function announceUpstream(request: IncomingMessage, headers: string[]): UpstreamTiming | undefined {
  if (!upstreamStart.hasSubscribers && !upstreamEnd.hasSubscribers) return undefined;
  const began = performance.now();
  let status = 0;
  if (upstreamStart.hasSubscribers) {
    upstreamStart.publish({
      request,
      addHeader(name: string, value: string) {
        headers.push(name, value);
      },
    });
  }
  return {
    answered(s) {
      status = s;
    },
    ended(error) {
      if (!upstreamEnd.hasSubscribers) return;
      upstreamEnd.publish({ request, status, ...(error !== undefined && { error }), durationSeconds: (performance.now() - began) / 1000 });
    },
  };
}
