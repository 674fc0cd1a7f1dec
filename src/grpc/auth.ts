import type { Metadata } from '@grpc/grpc-js';
import { authenticate } from '../auth/chain.ts';
import type { Principal, Verifier } from '../auth/types.ts';

/**
 * The caller of a gRPC call, by the same verifiers as MCP traffic: gRPC
 * metadata is HTTP/2 headers, so `authorization` (and an API key header,
 * where the policy turns it on) read exactly as on the MCP endpoint.
 * Binary (`-bin`) entries are never credentials and are skipped.
 */
export async function callerOf(verifiers: readonly Verifier[], metadata: Metadata): Promise<Principal | undefined> {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata.getMap())) {
    if (typeof value === 'string' && !key.endsWith('-bin')) headers[key] = value;
  }
  const r = await authenticate(verifiers, { headers });
  return r.ok ? r.principal : undefined;
}
