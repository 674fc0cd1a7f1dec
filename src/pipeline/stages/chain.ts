import type { ServerResponse } from 'node:http';
import type { Pool } from 'undici';
import { toolMetadata } from '../../config/policy/policy.ts';
import type { ToolErrors } from '../../config/settings.ts';
import type { Exchange } from '../../interceptors/contract.ts';
import { forward } from '../../upstream/forward.ts';
import type { Chain } from '../compose.ts';
import type { Outcome } from '../outcome.ts';
import { answer, refuseCall } from './reply.ts';

export type ChainStage = (ex: Exchange, res: ServerResponse, headers: string[], body: Buffer) => Promise<Outcome>;

/**
 * The interceptor chain decides; a call that passes is forwarded with its
 * body byte-identical, and the tool's own deadline bounds the wait for the
 * upstream's answer.
 */
export function chainStage(chain: Chain, pool: Pool, toolErrors: ToolErrors): ChainStage {
  return async (ex, res, headers, body) => {
    const verdict = await chain.run(ex);
    if (verdict.kind === 'deny') {
      const outputSchema = ex.message.name === undefined ? undefined : ex.catalogue.get(ex.message.name)?.tool.outputSchema;
      return refuseCall(res, ex.message, verdict, toolErrors, outputSchema === undefined);
    }
    if (verdict.kind === 'respond') return answer(res, ex.message, verdict.result);
    const headersTimeoutMs = toolMetadata(ex.policy, ex.message.name as string).timeoutMs;
    return forward(pool, ex.request, res, headers, body, ex.message.id, { headersTimeoutMs });
  };
}
