import type { Stage } from './stage.ts';
import type { ToolErrors } from '../../config/settings.ts';
import type { DiscoveryService } from '../../discovery/service.ts';
import { DISCOVER_METHOD, SEARCH_TOOL_NAME } from '../../discovery/search-tool.ts';
import type { Exchange } from '../../interceptors/contract.ts';
import type { Refusal } from '../../mcp/jsonrpc.ts';
import { publishDecision } from '../../telemetry/channels.ts';
import type { Chain } from '../compose.ts';
import { answer, refuse } from './reply.ts';

/** Whether an exchange is for one of discovery's two doors: the method, or the injected tool. */
export function isDiscovery(ex: Exchange): boolean {
  return ex.message.method === DISCOVER_METHOD || ex.message.name === SEARCH_TOOL_NAME;
}

/**
 * Discovery is answered by toolgate and never forwarded; of the chain only
 * what `chain` holds (the rate limits) applies to it. Its own input checks
 * are decisions like the interceptors' (stage `discovery`), so refused
 * queries and search_tools arguments are counted where refusals are.
 */
export function discoveryStage(discovery: DiscoveryService, chain: Chain, toolErrors: ToolErrors): Stage {
  return async (ex, res) => {
    const limited = await chain.run(ex);
    if (limited.kind === 'deny') return refuse(res, ex.message, limited, toolErrors);
    const door =
      ex.message.method === DISCOVER_METHOD
        ? await discovery.discover(ex, ex.message.params)
        : await discovery.searchTool(ex, ex.message.params?.arguments);
    if (door.ok) return answer(res, ex.message, door.result);
    const refusal: Refusal = { error: door.error, ...(door.data !== undefined && { data: door.data }) };
    publishDecision({
      request: ex.request,
      stage: 'discovery',
      allowed: false,
      principal: ex.principal,
      error: door.error,
      keywords: door.data?.errors?.map((e) => e.keyword),
    });
    // search_tools declares no outputSchema, so the error data may be its structuredContent.
    return refuse(res, ex.message, refusal, toolErrors);
  };
}
