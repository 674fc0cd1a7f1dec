/**
 * External validators in the chain (SEP-1763 shape). Every validator whose
 * hooks match the exchange is asked in parallel; the answers are then read in
 * priority order and the first that blocks decides:
 *  - active mode, `valid: false` with severity error → 403 validator_denied;
 *  - active mode, the validator could not be asked and does not fail open →
 *    503 validator_unavailable;
 *  - everything else passes (warnings, infos and audit-mode results are
 *    logged by validator name and closed code only).
 * A validator's message never crosses to the caller or to the logs.
 */
import type { ValidatorConfig } from '../config/policy/policy.ts';
import type { Exchange, Interceptor, Verdict } from './contract.ts';
import { isDryRun } from './dry-run.ts';
import { deny, PASS } from './contract.ts';
import { log } from '../telemetry/log.ts';

export type ValidatorOutcome =
  | { readonly kind: 'valid' }
  | { readonly kind: 'invalid'; readonly severity: 'info' | 'warning' | 'error'; readonly code: string | undefined }
  | { readonly kind: 'failed'; readonly reason: 'timeout' | 'unavailable' | 'malformed' };

/** What is sent to one validator: the toolgate.v1 ValidateRequest fields. */
type ValidationPayload = ReturnType<typeof validateRequest> & { readonly validator: string };

/**
 * How validators are asked: the gRPC clients (grpc/validator-client.ts),
 * passed in by the wiring so the chain does not depend on the transport.
 */
export interface ValidatorCaller {
  validate(target: string, payload: ValidationPayload, timeoutMs: number): Promise<ValidatorOutcome>;
  close(): void;
}

export interface ExternalValidators {
  readonly interceptor: Interceptor;
  close(): void;
}

const PHASE = 'request';
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
export function createExternalValidators(clients: ValidatorCaller): ExternalValidators {
  return {
    interceptor: {
      name: 'external_validators',
      methods: ['tools/call'],
      applies: (ex) => hookedFor(ex).length > 0,
      intercept(ex) {
        // The payload is params as JSON.parse read them: a validator would
        // judge the rounded number, not the digits the server will read.
        const inexact = ex.message.inexactInteger;
        if (inexact !== undefined)
          return deny('inexact_number', { errors: [{ instancePath: inexact, keyword: 'precision' }] });
        const event = ex.message.method as string;
        const hooked = hookedFor(ex);
        const request = validateRequest(ex, event);
        return Promise.all(
          hooked.map((v) => clients.validate(v.target, { ...request, validator: v.name }, v.timeoutMs)),
        ).then((outcomes) => decide(hooked, outcomes));
      },
    },
    close: () => clients.close(),
  };
}

/** Per policy (policies are immutable and replaced whole on reload): the validators each event hooks, in priority order. */
const hooked = new WeakMap<readonly ValidatorConfig[], Map<string | undefined, readonly ValidatorConfig[]>>();

function hookedFor(ex: Exchange): readonly ValidatorConfig[] {
  const all = ex.policy.validators;
  let byEvent = hooked.get(all);
  if (byEvent === undefined) hooked.set(all, (byEvent = new Map()));
  const event = ex.message.method;
  let found = byEvent.get(event);
  if (found === undefined) {
    found = all.filter((v) => v.hooks.some((h) => h.event === event && h.phase === PHASE));
    byEvent.set(event, found);
  }
  return found;
}

function decide(validators: readonly ValidatorConfig[], outcomes: readonly ValidatorOutcome[]): Verdict {
  let verdict: Verdict = PASS;
  validators.forEach((v, i) => {
    const o = outcomes[i] as ValidatorOutcome;
    const blocks =
      v.mode === 'active' && (o.kind === 'invalid' ? o.severity === 'error' : o.kind === 'failed' && !v.failOpen);
    if (o.kind !== 'valid') {
      const fields = {
        validator: v.name,
        mode: v.mode,
        ...(o.kind === 'invalid' ? { severity: o.severity, code: o.code } : { failure: o.reason }),
      };
      if (blocks) log.info('external validator refused a call', fields);
      else log.warn('external validator reported, call passes', fields);
    }
    if (blocks && verdict.kind === 'pass')
      verdict = deny(o.kind === 'invalid' ? 'validator_denied' : 'validator_unavailable');
  });
  return verdict;
}

function validateRequest(ex: Exchange, event: string) {
  const params = ex.message.params ?? {};
  const trace = traceOf(ex);
  return {
    event,
    phase: PHASE,
    payloadJson: JSON.stringify(params),
    principal: {
      id: ex.principal.id,
      scopes: [...ex.principal.scopes].sort(),
      credentialStrength: ex.principal.credentialStrength,
    },
    traceId: trace?.[1] ?? '',
    spanId: trace?.[2] ?? '',
    dryRun: isDryRun(ex.request),
  };
}

/** W3C trace context from `params._meta` (MCP) or the `traceparent` header, as the tracer reads it. */
function traceOf(ex: Exchange): RegExpExecArray | undefined {
  const meta = ex.message.params?._meta;
  const fromMeta =
    typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>).traceparent : undefined;
  const header = ex.request.headers.traceparent;
  const value = typeof fromMeta === 'string' ? fromMeta : typeof header === 'string' ? header : undefined;
  return value === undefined ? undefined : (TRACEPARENT.exec(value) ?? undefined);
}
