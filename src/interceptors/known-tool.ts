import { deny, PASS, type Interceptor } from './contract.ts';

/**
 * A tool the catalogue does not have is `unknown_tool` for every caller,
 * before any grant question: telling a caller to request scopes for a
 * misspelt name sends it the wrong way. A name toolgate does not know yet
 * gets one catalogue refresh (rate-limited by the source).
 */
export function knownToolInterceptor(): Interceptor {
  return {
    name: 'known_tool',
    methods: ['tools/call'],
    intercept(ex) {
      const name = ex.message.name;
      if (name === undefined) return deny('unknown_tool');
      if (ex.catalogue.get(name) !== undefined) return PASS;
      return ex.catalogue.refresh().then(() => (ex.catalogue.get(name) === undefined ? deny('unknown_tool') : PASS));
    },
  };
}
