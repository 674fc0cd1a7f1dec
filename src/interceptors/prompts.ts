import { promptDecision } from '../grants/surfaces.ts';
import { deny, type Interceptor } from './contract.ts';
import { surfaceVerdict } from './surface-verdict.ts';

/**
 * Prompt grants on prompts/get, once the policy has a `prompts` section:
 * a row must allow the name; conditions may read the prompt's arguments.
 * The Mcp-Name cross-check came first, at classification.
 */
export function promptsInterceptor(): Interceptor {
  return {
    name: 'prompt_grants',
    methods: ['prompts/get'],
    applies: (ex) => ex.policy.prompts !== undefined,
    intercept(ex) {
      const name = ex.message.name;
      if (name === undefined) return deny('invalid_params');
      const d = promptDecision(ex.policy, ex.principal, name, {
        protocolVersion: ex.message.protocolVersion,
        timeMs: Date.now(),
        arguments: ex.message.params?.arguments,
      });
      return surfaceVerdict(d, 'prompt_not_granted');
    },
  };
}
