import type { Stage } from './stage.ts';
import type { Pool } from 'undici';
import type { ToolErrors } from '../../config/settings.ts';
import { forward } from '../../upstream/forward.ts';
import type { Chain } from '../compose.ts';
import { refuse } from './reply.ts';

/** The methods the resource, prompt and completion grants decide. */
export const SURFACE_METHODS: readonly string[] = [
  'resources/read',
  'resources/subscribe',
  'prompts/get',
  'completion/complete',
];

/**
 * A read, get, subscription or completion: the chain's surface grants
 * decide (they pass whatever the policy does not police), and what passes is
 * forwarded as it came. A refusal is a JSON-RPC error at 200, as a server
 * answers these methods.
 */
export function surfaceStage(pool: Pool, chain: Chain, toolErrors: ToolErrors): Stage {
  return async (ex, res, headers, body) => {
    // 2026-07-28 has no resources/subscribe (subscriptions/listen replaced it): answered as its servers answer it.
    if (ex.message.era === 'modern' && ex.message.method === 'resources/subscribe')
      return refuse(res, ex.message, { error: 'method_not_found' }, toolErrors);
    const verdict = await chain.run(ex);
    if (verdict.kind === 'deny') return refuse(res, ex.message, verdict, toolErrors);
    return forward(
      pool,
      { req: ex.request, res, headers, body, rpcId: ex.message.id },
      { refuse: (r) => refuse(res, ex.message, r, toolErrors) },
    );
  };
}
