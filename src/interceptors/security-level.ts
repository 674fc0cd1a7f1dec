import { insufficientUserAuthenticationChallenge } from '../auth/challenge.ts';
import { calledTool } from '../mcp/tool-call.ts';
import { strengthSatisfies } from '../auth/strength.ts';
import { toolMetadata } from '../config/policy/policy.ts';
import { deny, PASS, type Interceptor } from './contract.ts';

/**
 * `elevated` tools need a short-lived or one-time credential, `strict` ones a
 * one-time credential. A refusal carries the RFC 9470 step-up challenge, so
 * an OAuth client knows to re-authenticate rather than give up.
 */
export function securityLevelInterceptor(): Interceptor {
  return {
    name: 'security_level',
    methods: ['tools/call'],
    intercept(ex) {
      const level = toolMetadata(ex.policy, calledTool(ex.message)).securityLevel;
      if (strengthSatisfies(level, ex.principal.credentialStrength)) return PASS;
      return deny('credential_too_weak', undefined, {
        'www-authenticate': insufficientUserAuthenticationChallenge(ex.policy.authentication.resourceMetadataUrl),
      });
    },
  };
}
