import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { authenticate, type AuthResult } from '../../auth/chain.ts';
import { unauthorizedChallenge } from '../../auth/challenge.ts';
import type { PolicyInForce } from '../../auth/policy-in-force.ts';
import type { CredentialProblem, Principal } from '../../auth/types.ts';
import { decision } from '../../telemetry/channels.ts';

export type Authenticated =
  | { readonly ok: true; readonly principal: Principal }
  | {
      readonly ok: false;
      readonly error: 'unauthenticated';
      readonly challenge: string;
      readonly problem?: CredentialProblem;
    }
  | { readonly ok: false; readonly error: 'credential_check_unavailable' };

/**
 * Who is calling, by the verifiers of the policy in force. It runs on the
 * headers alone, before a body byte is read, so an unauthenticated client
 * cannot make toolgate buffer megabytes.
 */
export function authenticator(
  current: () => PolicyInForce,
): (req: IncomingMessage) => Authenticated | Promise<Authenticated> {
  return (req) => {
    const inForce = current();
    const began = decision.hasSubscribers ? performance.now() : 0;
    const r = authenticate(inForce.verifiers, { headers: req.headers });
    return r instanceof Promise
      ? r.then((settled) => outcome(req, inForce, settled, began))
      : outcome(req, inForce, r, began);
  };
}

function outcome(req: IncomingMessage, inForce: PolicyInForce, r: AuthResult, began: number): Authenticated {
  if (decision.hasSubscribers) {
    // The chain's shape, field for field and in its order: subscribers see one shape of decision.
    decision.publish({
      request: req,
      stage: 'authentication',
      allowed: r.ok,
      principal: r.ok ? r.principal : undefined,
      error: r.ok ? undefined : r.code === 'unavailable' ? 'credential_check_unavailable' : 'unauthenticated',
      keywords: undefined,
      mode: undefined,
      rule: undefined,
      durationSeconds: (performance.now() - began) / 1000,
    });
  }
  // The chain's answer already has this shape (and names the verifier besides): no copy per request.
  if (r.ok) return r;
  // A credential that verified but whose reuse cannot be ruled out now: retryable, not a bad credential.
  if (r.code === 'unavailable') return { ok: false, error: 'credential_check_unavailable' };
  return {
    ok: false,
    error: 'unauthenticated',
    challenge: unauthorizedChallenge(r.code, inForce.policy.authentication.resourceMetadataUrl, r.problem),
    ...(r.problem !== undefined && { problem: r.problem }),
  };
}
