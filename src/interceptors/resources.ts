import { resourceDecision } from '../grants/surfaces.ts';
import { isRecord } from '../json/record.ts';
import { uriProblem } from '../mcp/resource-uri.ts';
import { deny, PASS, type Interceptor, type Verdict } from './contract.ts';
import { surfaceVerdict } from './surface-verdict.ts';

const LISTEN = 'subscriptions/listen';

function subscriptionsOf(params: Readonly<Record<string, unknown>> | undefined): readonly unknown[] | undefined {
  const filter = params?.notifications;
  const uris = isRecord(filter) ? filter.resourceSubscriptions : undefined;
  return Array.isArray(uris) ? uris : undefined;
}

/**
 * Resource grants on resources/read and resources/subscribe, once the
 * policy has a `resources` section: the URI must be in toolgate's normal
 * form (it is compared byte for byte, as the server will read it), then a
 * row must allow it. The Mcp-Name cross-check of resources/read came first,
 * at classification. Unsubscribing is never refused. A 2026-07-28
 * `subscriptions/listen` is refused when any of its `resourceSubscriptions`
 * would be.
 */
export function resourcesInterceptor(): Interceptor {
  return {
    name: 'resource_grants',
    methods: ['resources/read', 'resources/subscribe', LISTEN],
    applies: (ex) =>
      ex.policy.resources !== undefined &&
      (ex.message.method !== LISTEN || subscriptionsOf(ex.message.params) !== undefined),
    intercept(ex) {
      const uris = ex.message.method === LISTEN ? (subscriptionsOf(ex.message.params) ?? []) : [ex.message.params?.uri];
      // An enforced refusal of any URI decides; one only recorded is returned when nothing enforced refuses.
      let shadowed: Verdict | undefined;
      for (const uri of uris) {
        if (typeof uri !== 'string' || uriProblem(uri) !== undefined) return deny('invalid_resource_uri');
        const v = surfaceVerdict(
          resourceDecision(ex.policy, ex.principal, uri, {
            protocolVersion: ex.message.protocolVersion,
            timeMs: Date.now(),
          }),
          'resource_not_granted',
        );
        if (v.kind === 'deny' && v.audit !== true) return v;
        if (uris.length === 1 || (v.kind === 'deny' && shadowed === undefined)) shadowed = v;
      }
      return shadowed ?? PASS;
    },
  };
}
