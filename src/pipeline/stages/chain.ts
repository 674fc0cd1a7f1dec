import type { ServerResponse } from 'node:http';
import { isOurState } from '../../approval/request-state.ts';
import { withoutParamsMembers } from '../../json/params-members.ts';
import type { ToolErrors } from '../../config/settings.ts';
import type { Exchange } from '../../interceptors/contract.ts';
import type { Chain } from '../compose.ts';
import type { Outcome } from '../outcome.ts';
import type { ExecuteStage } from './execute.ts';
import { answer, refuseCall } from './reply.ts';

export type ChainStage = (ex: Exchange, res: ServerResponse, headers: string[], body: Buffer) => Promise<Outcome>;

/** What toolgate adds to a call when it asks for an approval, and the client sends back when it repeats it. */
const APPROVAL_CONTINUATION = new Set(['requestState', 'inputResponses']);

/**
 * The interceptor chain decides; a call that passes is executed with its
 * body byte-identical but for toolgate's own `_meta` fields, and without the
 * continuation of an approval toolgate asked for (the upstream never saw
 * that round trip: it gets the original call).
 */
export function chainStage(chain: Chain, execute: ExecuteStage, toolErrors: ToolErrors): ChainStage {
  return async (ex, res, headers, body) => {
    const verdict = await chain.run(ex);
    if (verdict.kind === 'deny') return refuseCall(ex, res, verdict, toolErrors);
    if (verdict.kind === 'respond') return answer(res, ex.message, verdict.result);
    const original = isOurState(ex.message.params?.requestState) ? withoutParamsMembers(body, APPROVAL_CONTINUATION) : body;
    return execute(ex, res, headers, original);
  };
}
