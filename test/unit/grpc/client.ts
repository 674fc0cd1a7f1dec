import assert from 'node:assert/strict';
import { credentials, Metadata, type Client, type ServiceError } from '@grpc/grpc-js';
import { serviceClient } from '../../../src/grpc/definitions.ts';

export interface GrpcClients {
  call<T>(
    service: 'Health' | 'PolicyService' | 'DiscoveryService' | 'GrantAdmin' | 'ContractService' | 'ApprovalService',
    method: string,
    request: object,
    authorization?: string,
  ): Promise<T>;
  client(service: string): Client;
  close(): void;
}

const FULL: Record<string, string> = {
  Health: 'grpc.health.v1.Health',
  PolicyService: 'toolgate.v1.PolicyService',
  DiscoveryService: 'toolgate.v1.DiscoveryService',
  GrantAdmin: 'toolgate.v1.GrantAdmin',
  ContractService: 'toolgate.v1.ContractService',
  ApprovalService: 'toolgate.v1.ApprovalService',
};

/** Real grpc-js clients for every toolgate service on one port; unary calls as promises. */
export function grpcClients(port: number): GrpcClients {
  const clients = new Map<string, Client>();
  const client = (service: string): Client => {
    let c = clients.get(service);
    if (c === undefined) {
      const Ctor = serviceClient(FULL[service] as string);
      c = new Ctor(`127.0.0.1:${port}`, credentials.createInsecure());
      clients.set(service, c);
    }
    return c;
  };
  return {
    client,
    call<T>(service: string, method: string, request: object, authorization?: string): Promise<T> {
      const metadata = new Metadata();
      if (authorization !== undefined) metadata.set('authorization', authorization);
      const c = client(service) as unknown as Record<
        string,
        (r: object, m: Metadata, o: object, cb: (e: ServiceError | null, v: T) => void) => void
      >;
      return new Promise((resolve, reject) => {
        (c[method] as (r: object, m: Metadata, o: object, cb: (e: ServiceError | null, v: T) => void) => void).call(
          c,
          request,
          metadata,
          { deadline: new Date(Date.now() + 5000) },
          (err, value) => (err === null ? resolve(value) : reject(err)),
        );
      });
    },
    close() {
      for (const c of clients.values()) c.close();
    },
  };
}

/** The error a call that must fail failed with; the test fails if it succeeded. */
export async function refusal(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (err) {
    return err as ServiceError;
  }
  assert.fail('expected a gRPC error');
}
