import { strengthSatisfies } from '../auth/strength.ts';
import { toolMetadata } from '../config/policy/policy.ts';
import { deny, PASS, type Interceptor } from './contract.ts';

/** `elevated` tools need a short-lived or one-time credential, `strict` ones a one-time credential. */
export function securityLevelInterceptor(): Interceptor {
  return {
    name: 'security_level',
    methods: ['tools/call'],
    intercept(ex) {
      const level = toolMetadata(ex.policy, ex.message.name as string).securityLevel;
      return strengthSatisfies(level, ex.principal.credentialStrength) ? PASS : deny('credential_too_weak');
    },
  };
}
