import type { CatalogueView } from '../catalogue/view.ts';
import { deny, PASS, type Interceptor } from './contract.ts';

/**
 * A tool the catalogue does not have is `unknown_tool` for every caller,
 * before any grant question: telling a caller to request scopes for a
 * misspelt name sends it the wrong way. A name toolgate does not know yet
 * gets one catalogue refresh (rate-limited by the source). `synced` is the
 * whole synced catalogue, quarantined tools included: such a tool exists,
 * and the contract quarantine, not this stage, answers for it.
 */
export function knownToolInterceptor(synced: CatalogueView): Interceptor {
  return {
    name: 'known_tool',
    methods: ['tools/call'],
    intercept(ex) {
      const name = ex.message.name;
      if (name === undefined) return deny('unknown_tool');
      if (synced.get(name) !== undefined) return PASS;
      return synced.refresh().then(() => (synced.get(name) === undefined ? deny('unknown_tool') : PASS));
    },
  };
}
