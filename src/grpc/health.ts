/**
 * grpc.health.v1.Health, so Kubernetes gRPC probes work. Every service
 * toolgate serves (and the empty name, the server as a whole) is SERVING
 * exactly when /readyz would answer 200. Health needs no credential: probes
 * carry none, and the answer says nothing about policy.
 */
import {
  status,
  type sendUnaryData,
  type Server,
  type ServerUnaryCall,
  type ServerWritableStream,
} from '@grpc/grpc-js';
import { serviceDefinition } from './definitions.ts';
import type { HealthCheckRequest__Output } from './generated/grpc/health/v1/HealthCheckRequest.ts';
import type { HealthCheckResponse } from './generated/grpc/health/v1/HealthCheckResponse.ts';

/** Watch streams re-read readiness this often and send only changes. */
const WATCH_INTERVAL_MS = 1000;

export class HealthService {
  readonly #services: ReadonlySet<string>;
  readonly #notReady: () => readonly string[];
  readonly #watches = new Set<() => void>();

  constructor(services: readonly string[], notReady: () => readonly string[]) {
    this.#services = new Set(['', ...services]);
    this.#notReady = notReady;
  }

  addToServer(server: Server): void {
    server.addService(serviceDefinition('grpc.health.v1.Health'), {
      Check: (
        call: ServerUnaryCall<HealthCheckRequest__Output, HealthCheckResponse>,
        callback: sendUnaryData<HealthCheckResponse>,
      ) => {
        if (!this.#services.has(call.request.service)) {
          callback({ code: status.NOT_FOUND, details: 'unknown service' });
          return;
        }
        callback(null, { status: this.#status() });
      },
      Watch: (call: ServerWritableStream<HealthCheckRequest__Output, HealthCheckResponse>) => {
        const known = this.#services.has(call.request.service);
        let last = '';
        const send = () => {
          const now = known ? this.#status() : 'SERVICE_UNKNOWN';
          if (now !== last) call.write({ status: now });
          last = now;
        };
        send();
        const timer = setInterval(send, WATCH_INTERVAL_MS);
        const stop = () => {
          clearInterval(timer);
          this.#watches.delete(stop);
          call.end();
        };
        this.#watches.add(stop);
        call.on('cancelled', stop);
      },
    });
  }

  /** Ends every open Watch stream (shutdown). */
  close(): void {
    for (const stop of Array.from(this.#watches)) stop();
  }

  #status(): 'SERVING' | 'NOT_SERVING' {
    return this.#notReady().length === 0 ? 'SERVING' : 'NOT_SERVING';
  }
}
