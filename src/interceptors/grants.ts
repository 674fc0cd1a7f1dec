import { deny, PASS, refuse, type Interceptor } from './contract.ts';
import { mayCall, notGranted, scopesThatWouldHelp } from '../grants/visibility.ts';

/**
 * Default deny: a call passes only with an allowing grant for this exact
 * tool and the tool's required scopes. Checked on every call, whether or not
 * the tool was ever listed to this caller.
 */
export function grantsInterceptor(): Interceptor {
  return {
    name: 'grants',
    methods: ['tools/call'],
    intercept(ex) {
      const tool = ex.message.name;
      if (tool === undefined) return deny('unknown_tool');
      if (mayCall(ex.policy, ex.snapshot, ex.principal, tool)) return PASS;
      return ex.rowsForTool(tool).then((rows) => refuse(notGranted(ex.policy, scopesThatWouldHelp(ex.policy, ex.snapshot, ex.principal, tool, rows))));
    },
  };
}
