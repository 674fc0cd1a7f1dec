import { performance } from 'node:perf_hooks';
import { calledTool } from '../../mcp/tool-call.ts';
import type { RateLimitRule } from '../../config/policy/policy.ts';
import { DISCOVER_METHOD, SEARCH_TOOL_NAME } from '../../discovery/search-tool.ts';
import { isDryRun } from '../dry-run.ts';
import { deny, PASS, type Interceptor, type Verdict } from '../contract.ts';
import { TokenBuckets, type Admission, type BucketLimit } from './buckets.ts';

/** Where the buckets live: in process, or shared through Redis. */
export interface Limiter {
  take(limits: readonly BucketLimit[], subject: string, consume: boolean): Admission | Promise<Admission>;
}

/**
 * The policy's `rateLimits` for tools/call. Every rule naming the caller (or
 * `*`) and the tool (or `*`) applies, each with a bucket per principal, and
 * all must admit the call: 429 `rate_limited` with Retry-After otherwise.
 * It runs after grants and security level, so only calls toolgate would
 * allow use up a quota; a dry run (Explain) says whether a call would pass
 * without taking anything. Discovery, which toolgate answers itself, counts
 * as calls of `search_tools` through either door.
 */
export function rateLimitInterceptor(buckets: Limiter = new TokenBuckets(() => performance.now())): Interceptor {
  return {
    name: 'rate_limit',
    methods: ['tools/call', DISCOVER_METHOD],
    applies: (ex) => ex.policy.rateLimits.length > 0,
    intercept(ex) {
      const tool = ex.message.method === DISCOVER_METHOD ? SEARCH_TOOL_NAME : calledTool(ex.message);
      const id = ex.principal.id;
      const limits: RateLimitRule[] = [];
      for (const rule of ex.policy.rateLimits) {
        if ((rule.principal === '*' || rule.principal === id) && (rule.tool === '*' || rule.tool === tool))
          limits.push(rule);
      }
      if (limits.length === 0) return PASS;
      const admission = buckets.take(limits, id, !isDryRun(ex.request));
      return admission instanceof Promise ? admission.then(verdict) : verdict(admission);
    },
  };
}

function verdict(admission: Admission): Verdict {
  if (admission.ok) return PASS;
  const seconds = Math.max(1, Math.ceil(admission.retryAfterMs / 1000));
  return deny('rate_limited', { retryAfterMs: admission.retryAfterMs }, { 'retry-after': String(seconds) });
}
