import type { Policy } from '../config/policy/policy.ts';
import { argumentsInterceptor } from '../interceptors/arguments.ts';
import { conditionsInterceptor } from '../interceptors/conditions.ts';
import type { Interceptor } from '../interceptors/contract.ts';
import { grantsInterceptor } from '../interceptors/grants.ts';
import { idempotencyInterceptor } from '../interceptors/idempotency.ts';
import { rateLimitInterceptor, type Limiter } from '../interceptors/rate-limit/interceptor.ts';
import { securityLevelInterceptor } from '../interceptors/security-level.ts';
import type { SchemaCache } from '../validation/cache.ts';

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
 * them. The proxy adds the contract quarantine (it holds the synced
 * catalogue the offline commands do not have), its rate-limit buckets
 * (shared through Redis when configured) and, last, external validators.
 */
export function policyChecks(cacheFor: (policy: Policy) => SchemaCache, proxy: { quarantine?: Interceptor; limiter?: Limiter } = {}): PolicyChecks {
  const { quarantine, limiter } = proxy;
  const rateLimit = rateLimitInterceptor(limiter);
  return {
    checks: [
      grantsInterceptor(), securityLevelInterceptor(), ...(quarantine === undefined ? [] : [quarantine]), idempotencyInterceptor(), rateLimit, argumentsInterceptor(cacheFor), conditionsInterceptor(),
    ],
    rateLimit,
  };
}
