import { canStepUp } from '../auth/strength.ts';
import { decide } from '../grants/snapshot.ts';
import type { Decision } from '../grants/types.ts';
import { deny, PASS, refuse, type Interceptor, type Verdict } from './contract.ts';
import { wouldDenyOf } from './conditions.ts';
import { mayCall, notGranted, scopesThatWouldHelp } from '../grants/visibility.ts';

export interface GrantsOptions {
  /** Answer an ungranted tool as `unknown_tool`, so a caller cannot tell it from one that does not exist. */
  readonly hideUngranted: boolean;
}

/**
 * Default deny: a call passes only with an allowing grant for this exact
 * tool and the tool's required scopes. Checked on every call, whether or not
 * the tool was ever listed to this caller. For a tool with conditional rows
 * this lets through the calls some row could allow; the conditions stage
 * decides them once the arguments are validated.
 */
export function grantsInterceptor(options: GrantsOptions): Interceptor {
  return {
    name: 'grants',
    methods: ['tools/call'],
    intercept(ex) {
      const tool = ex.message.name;
      if (tool === undefined) return deny('unknown_tool');
      const d = decide(ex.snapshot, tool);
      if (mayCall(ex.policy, ex.snapshot, ex.principal, tool)) return d.pending === true ? PASS : decided(PASS, d);
      if (options.hideUngranted) return decided(deny('unknown_tool'), d);
      // A static key cannot gain scopes: naming the ones that would grant the tool would send it nowhere.
      if (!canStepUp(ex.principal.credentialStrength)) return decided(refuse(notGranted(ex.policy, undefined)), d);
      return ex
        .rowsForTool(tool)
        .then((rows) =>
          decided(
            refuse(notGranted(ex.policy, scopesThatWouldHelp(ex.policy, ex.snapshot, ex.principal, tool, rows))),
            d,
          ),
        );
    },
  };
}

/** The verdict naming the deciding row, and shadowed when the decision's rows are in audit mode. */
function decided(v: Verdict, d: Decision): Verdict {
  const rule = (v.kind === 'deny') === (d.effect === 'deny') ? d.rows[0]?.name : undefined;
  if (v.kind === 'respond' || (rule === undefined && d.audit !== true && d.wouldDeny === undefined)) return v;
  return {
    ...v,
    ...(rule !== undefined && { rule }),
    ...(v.kind === 'deny' && d.audit === true && { audit: true as const }),
    ...(v.kind === 'deny' && wouldDenyOf(d)),
  };
}
