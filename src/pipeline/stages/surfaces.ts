import type { ServerResponse } from 'node:http';
import type { Pool } from 'undici';
import type { ToolErrors } from '../../config/settings.ts';
import type { Exchange } from '../../interceptors/contract.ts';
import { forward } from '../../upstream/forward.ts';
import type { Chain } from '../compose.ts';
import type { Outcome } from '../outcome.ts';
import { refuse } from './reply.ts';

export type SurfaceStage = (ex: Exchange, res: ServerResponse, headers: string[], body: Buffer) => Promise<Outcome>;

/** The methods the resource, prompt and completion grants decide. */
export const SURFACE_METHODS: readonly string[] = ['resources/read', 'resources/subscribe', 'prompts/get', 'completion/complete'];

/**
 * A read, get, subscription or completion: the chain's surface grants
 * decide (they pass whatever the policy does not police), and what passes is
 * forwarded as it came. A refusal is a JSON-RPC error at 200, as a server
 * answers these methods.
 */
export function surfaceStage(pool: Pool, chain: Chain, toolErrors: ToolErrors): SurfaceStage {
  return async (ex, res, headers, body) => {
    // 2026-07-28 has no resources/subscribe (subscriptions/listen replaced it): answered as its servers answer it.
    if (ex.message.era === 'modern' && ex.message.method === 'resources/subscribe') return refuse(res, ex.message, { error: 'method_not_found' }, toolErrors);
    const verdict = await chain.run(ex);
    if (verdict.kind === 'deny') return refuse(res, ex.message, verdict, toolErrors);
    return forward(pool, ex.request, res, headers, body, ex.message.id, { refuse: (r) => refuse(res, ex.message, r, toolErrors) });
  };
}
