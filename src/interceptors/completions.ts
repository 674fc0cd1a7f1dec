import { isRecord } from '../json/record.ts';
import { mayListPrompt, mayListTemplate } from '../grants/surfaces.ts';
import { deny, PASS, type Interceptor } from './contract.ts';

/**
 * completion/complete suggests values for a prompt's or a resource
 * template's arguments, which can leak what the prompt or resource holds:
 * it is allowed only for a prompt the principal may get, or a resource
 * template that could expand to a URI it may read. The arguments of the
 * eventual get are not known yet, so conditions are taken at their best
 * case, as listings take them. A reference of another kind is refused once
 * either surface is policed.
 */
export function completionsInterceptor(): Interceptor {
  return {
    name: 'completion_grants',
    methods: ['completion/complete'],
    applies: (ex) => ex.policy.resources !== undefined || ex.policy.prompts !== undefined,
    intercept(ex) {
      const ref = ex.message.params?.ref;
      if (!isRecord(ref)) return deny('invalid_params');
      if (ref.type === 'ref/prompt' && typeof ref.name === 'string') {
        return mayListPrompt(ex.policy, ex.principal, ref.name) ? PASS : deny('prompt_not_granted');
      }
      if (ref.type === 'ref/resource' && typeof ref.uri === 'string') {
        return mayListTemplate(ex.policy, ex.principal, ref.uri) ? PASS : deny('resource_not_granted');
      }
      return deny('invalid_params');
    },
  };
}
