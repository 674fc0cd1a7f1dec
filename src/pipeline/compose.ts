import { performance } from 'node:perf_hooks';
import { decision } from '../telemetry/channels.ts';
import { shadowed } from './shadow.ts';
import { PASS, type Exchange, type Interceptor, type Verdict } from '../interceptors/contract.ts';

export interface Chain {
  /** The interceptors in order, for the method of this exchange. */
  run(exchange: Exchange): Verdict | Promise<Verdict>;
}

const NAME = /^[a-z][a-z0-9_]*$/;

/**
 * Builds the chain once at start. Order is the array order; mistakes in the
 * list (duplicate or malformed names, no methods) fail here, not per request.
 * Per method, the applicable interceptors are resolved ahead of time.
 */
export function composeChain(interceptors: readonly Interceptor[]): Chain {
  const seen = new Set<string>();
  const byMethod = new Map<string, Interceptor[]>();
  for (const i of interceptors) {
    if (!NAME.test(i.name)) throw new TypeError(`interceptor name ${JSON.stringify(i.name)} is not snake_case`);
    if (seen.has(i.name)) throw new TypeError(`interceptor ${i.name} is listed twice`);
    if (i.methods.length === 0) throw new TypeError(`interceptor ${i.name} sees no method`);
    seen.add(i.name);
    for (const m of i.methods) {
      const list = byMethod.get(m) ?? [];
      list.push(i);
      byMethod.set(m, list);
    }
  }
  const frozen = new Map([...byMethod].map(([m, list]) => [m, Object.freeze(list)] as const));
  return {
    run(exchange) {
      const list = exchange.message.method === undefined ? undefined : frozen.get(exchange.message.method);
      return list === undefined ? PASS : runFrom(list, 0, exchange, clock());
    },
  };
}

/**
 * Runs the interceptors from `start`. While decisions are observed, one clock
 * reading ends each verdict and starts the next (`began`): an interceptor's
 * duration includes the `applies` checks of those skipped just before it.
 */
function runFrom(
  list: readonly Interceptor[],
  start: number,
  exchange: Exchange,
  began: number,
): Verdict | Promise<Verdict> {
  for (let i = start; i < list.length; i++) {
    const interceptor = list[i] as Interceptor;
    if (interceptor.applies !== undefined && !interceptor.applies(exchange)) continue;
    const v = interceptor.intercept(exchange);
    if (v instanceof Promise) {
      return v.then((settled) => {
        const ended = clock();
        return settle(interceptor, exchange, settled, ended - began) ? runFrom(list, i + 1, exchange, ended) : settled;
      });
    }
    const ended = clock();
    if (!settle(interceptor, exchange, v, ended - began)) return v;
    began = ended;
  }
  return PASS;
}

/** The time in milliseconds while anyone observes decisions; 0, and no clock read, otherwise. */
function clock(): number {
  return decision.hasSubscribers ? performance.now() : 0;
}

/** Publishes the verdict and says whether the chain goes on: it passed, or its refusal is shadowed. */
function settle(interceptor: Interceptor, ex: Exchange, v: Verdict, elapsedMs: number): boolean {
  const audit = v.kind === 'deny' && shadowed(ex, interceptor.name, v);
  if (decision.hasSubscribers) {
    // An audit-mode row that held beside the enforced refusal is recorded first, as it would be alone.
    if (v.kind === 'deny' && !audit && v.wouldDeny !== undefined) {
      decision.publish({
        request: ex.request,
        stage: interceptor.name,
        allowed: false,
        principal: ex.principal,
        error: v.error,
        mode: 'audit',
        ...(v.wouldDeny.rule !== undefined && { rule: v.wouldDeny.rule }),
        durationSeconds: 0,
      });
    }
    const denied = v.kind === 'deny';
    // One shape for every verdict, absent fields undefined: no spread objects on every interceptor of every call.
    decision.publish({
      request: ex.request,
      stage: interceptor.name,
      allowed: !denied,
      principal: ex.principal,
      error: denied ? v.error : undefined,
      keywords: denied ? v.data?.errors?.map((e) => e.keyword) : undefined,
      mode: audit ? 'audit' : undefined,
      rule: v.kind === 'respond' ? undefined : v.rule,
      durationSeconds: elapsedMs / 1000,
    });
  }
  return v.kind === 'pass' || audit;
}
