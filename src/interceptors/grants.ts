import { deny, PASS, refuse, type Interceptor } from './contract.ts';
import { mayCall, notGranted, scopesThatWouldHelp } from '../grants/visibility.ts';

export interface GrantsOptions {
  /** Answer an ungranted tool as `unknown_tool`, so a caller cannot tell it from one that does not exist. */
  readonly hideUngranted: boolean;
}

/**
 * Default deny: a call passes only with an allowing grant for this exact
 * tool and the tool's required scopes. Checked on every call, whether or not
 * the tool was ever listed to this caller.
 */
export function grantsInterceptor(options: GrantsOptions): Interceptor {
  return {
    name: 'grants',
    methods: ['tools/call'],
    intercept(ex) {
      const tool = ex.message.name as string;
      if (mayCall(ex.policy, ex.snapshot, ex.principal, tool)) return PASS;
      if (options.hideUngranted) return deny('unknown_tool');
      return ex.rowsForTool(tool).then((rows) => refuse(notGranted(ex.policy, scopesThatWouldHelp(ex.policy, ex.snapshot, ex.principal, tool, rows))));
    },
  };
}
