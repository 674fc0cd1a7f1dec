import type { Policy } from '../config/policy.ts';
import { argumentsInterceptor } from '../interceptors/arguments.ts';
import { conditionsInterceptor } from '../interceptors/conditions.ts';
import { grantsInterceptor } from '../interceptors/grants.ts';
import { rateLimitInterceptor } from '../interceptors/rate-limit.ts';
import { securityLevelInterceptor } from '../interceptors/security-level.ts';
import { SchemaCache } from '../validation/cache.ts';
import { createSchemaRegistry } from '../validation/registry.ts';
import type { Interceptor } from './types.ts';

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
 * them. External validators are appended by the proxy only.
 */
export function policyChecks(cacheFor: (policy: Policy) => SchemaCache): PolicyChecks {
  const rateLimit = rateLimitInterceptor();
  return {
    checks: [grantsInterceptor(), securityLevelInterceptor(), rateLimit, argumentsInterceptor(cacheFor), conditionsInterceptor()],
    rateLimit,
  };
}

/**
 * One validator cache per set of registered schemas: a validator compiled
 * against one registry must never serve another. Policies without registered
 * schemas share one cache, so a reload does not recompile every tool.
 */
export function schemaCaches(): (policy: Policy) => SchemaCache {
  const plain = new SchemaCache();
  const byPolicy = new WeakMap<Policy, SchemaCache>();
  return (policy) => {
    if (Object.keys(policy.schemas).length === 0) return plain;
    let cache = byPolicy.get(policy);
    if (cache === undefined) {
      const registry = createSchemaRegistry(policy.schemas);
      // Policy loading already refused registries that cannot be built.
      cache = registry.ok ? new SchemaCache(4096, { registry: registry.registry }) : plain;
      byPolicy.set(policy, cache);
    }
    return cache;
  };
}
