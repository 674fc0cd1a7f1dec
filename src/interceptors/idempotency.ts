import { toolMetadata } from '../config/policy/policy.ts';
import { calledTool } from '../mcp/tool-call.ts';
import { readKey } from '../execution/idempotency-key.ts';
import { deny, PASS, type Interceptor } from './contract.ts';

/**
 * A malformed idempotency key is refused whatever the tool (a caller that
 * meant to be safe must learn it was not), and a `non_idempotent_write` tool
 * whose policy says `idempotency: required` is refused without one: 400
 * idempotency_key_required. Runs before the rate limits, so a refused call
 * uses up no quota.
 */
export function idempotencyInterceptor(): Interceptor {
  return {
    name: 'idempotency',
    methods: ['tools/call'],
    intercept(ex) {
      const key = readKey(ex.request, ex.message);
      if (key.kind === 'invalid') return deny('idempotency_key_required');
      if (key.kind === 'key') return PASS;
      const meta = toolMetadata(ex.policy, calledTool(ex.message));
      return meta.idempotency === 'required' && meta.sideEffect === 'non_idempotent_write'
        ? deny('idempotency_key_required')
        : PASS;
    },
  };
}
