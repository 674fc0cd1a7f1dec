import type { Policy } from '../config/policy/policy.ts';
import { approvalQuestion } from '../interceptors/approval.ts';
import { argumentsInterceptor } from '../interceptors/arguments.ts';
import { completionsInterceptor } from '../interceptors/completions.ts';
import { conditionsInterceptor } from '../interceptors/conditions.ts';
import type { Interceptor } from '../interceptors/contract.ts';
import { grantsInterceptor } from '../interceptors/grants.ts';
import { idempotencyInterceptor } from '../interceptors/idempotency.ts';
import { promptsInterceptor } from '../interceptors/prompts.ts';
import { resourcesInterceptor } from '../interceptors/resources.ts';
import { rateLimitInterceptor, type Limiter } from '../interceptors/rate-limit/interceptor.ts';
import { securityLevelInterceptor } from '../interceptors/security-level.ts';
import type { SchemaCache } from '../validation/cache.ts';

/** What only the proxy adds: it holds the synced catalogue the offline commands do not have. */
export interface ProxyChecks {
  /** Refuses a tool the catalogue lacks as unknown_tool, before any grant question; runs first. */
  readonly knownTool?: Interceptor;
  /** Answer an ungranted tool as unknown_tool too (TOOLGATE_HIDE_UNGRANTED). */
  readonly hideUngranted?: boolean;
  /** The contract quarantine, after the security level. */
  readonly quarantine?: Interceptor;
  /** The rate-limit buckets: shared through Redis when configured, else in process. */
  readonly limiter?: Limiter;
  /** Human approval for `require_approval` rows: last of toolgate's own checks, so nobody approves a call toolgate would refuse. Without one (the offline doors), the rows still decide and a call is reported as approval_required. */
  readonly approval?: Interceptor;
}

export interface PolicyChecks {
  /** toolgate's own checks of a tools/call, in order. */
  readonly checks: readonly Interceptor[];
  /** The rate limits alone: discovery, answered locally, is checked against them only. */
  readonly rateLimit: Interceptor;
}

/**
 * toolgate's own checks, in the order they run, shared by the proxy and the
 * offline `toolgate policy` commands so both decide with the same code: who
 * may call, with what credential, how often, with which arguments, and then
 * the grant conditions, which read the arguments once the schema accepted
 * them. Resource, prompt and completion grants decide their own methods.
 * The proxy adds what needs its catalogue (ProxyChecks), its rate-limit
 * buckets (shared through Redis when configured) and, last, external
 * validators.
 */
export function policyChecks(cacheFor: (policy: Policy) => SchemaCache, proxy: ProxyChecks = {}): PolicyChecks {
  const rateLimit = rateLimitInterceptor(proxy.limiter);
  return {
    checks: [
      ...optional(proxy.knownTool),
      grantsInterceptor({ hideUngranted: proxy.hideUngranted ?? false }),
      securityLevelInterceptor(),
      ...optional(proxy.quarantine),
      idempotencyInterceptor(),
      rateLimit,
      argumentsInterceptor(cacheFor),
      conditionsInterceptor(),
      proxy.approval ?? approvalQuestion(),
      resourcesInterceptor(),
      promptsInterceptor(),
      completionsInterceptor(),
    ],
    rateLimit,
  };
}

function optional(i: Interceptor | undefined): Interceptor[] {
  return i === undefined ? [] : [i];
}
