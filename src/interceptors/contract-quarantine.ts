import { DIGEST_PREFIX_LENGTH, type Quarantined } from '../catalogue/contracts/guard.ts';
import { calledTool } from '../mcp/tool-call.ts';
import { deny, PASS, type Interceptor } from './contract.ts';

export interface QuarantineSource {
  quarantined(tool: string): Quarantined | undefined;
  quarantinedTools(): ReadonlyMap<string, Quarantined>;
}

/**
 * Calls to a quarantined tool (its contract drifted from the approved one,
 * or lint found it poisoned) are refused until an operator approves it. One
 * map lookup: the digests were compared when the catalogue was synced.
 */
export function contractQuarantineInterceptor(source: QuarantineSource): Interceptor {
  return {
    name: 'contract_quarantine',
    methods: ['tools/call'],
    // Only enforce modes quarantine, and with nothing quarantined the stage could only pass: then it is not there at all.
    applies: (ex) =>
      (ex.policy.contracts.mode === 'enforce' || ex.policy.contracts.lint === 'enforce') &&
      source.quarantinedTools().size > 0,
    intercept(ex) {
      const tool = calledTool(ex.message);
      const q = source.quarantined(tool);
      if (q === undefined) return PASS;
      return deny('tool_contract_changed', {
        tool,
        ...(q.approvedDigest !== undefined && { approvedDigest: q.approvedDigest.slice(0, DIGEST_PREFIX_LENGTH) }),
      });
    },
  };
}
