/**
 * Runs verifiers in order. The first that recognises the credential decides,
 * and a recognised-but-bad credential is final: a later verifier never gets to
 * accept what an earlier one refused. A credential nobody recognises is bad,
 * not absent, so it can never fall through to anonymous access.
 */
import { hasCredential } from './credentials.ts';
import type { AuthRequest, CredentialProblem, Principal, Verifier, VerifyFailure, VerifyResult } from './types.ts';

export type AuthResult =
  | { ok: true; principal: Principal; verifier: string }
  | { ok: false; code: VerifyFailure; verifier: string | undefined; problem?: CredentialProblem };

/** Synchronous when every verifier asked answers synchronously (a static key), so the common path awaits nothing. */
export function authenticate(verifiers: readonly Verifier[], req: AuthRequest): AuthResult | Promise<AuthResult> {
  return from(verifiers, 0, req);
}

function from(verifiers: readonly Verifier[], start: number, req: AuthRequest): AuthResult | Promise<AuthResult> {
  for (let i = start; i < verifiers.length; i++) {
    const v = verifiers[i] as Verifier;
    let r: VerifyResult | Promise<VerifyResult>;
    try {
      r = v.verify(req);
    } catch {
      return failClosed(v);
    }
    if (r instanceof Promise)
      return r.then(
        (settled) => decided(v, settled) ?? from(verifiers, i + 1, req),
        () => failClosed(v),
      );
    const d = decided(v, r);
    if (d !== undefined) return d;
  }
  return { ok: false, code: hasCredential(req) ? 'bad_credential' : 'no_credential', verifier: undefined };
}

// The contract says verifiers never throw; if one does, fail closed.
function failClosed(v: Verifier): AuthResult {
  return { ok: false, code: 'bad_credential', verifier: v.name };
}

/** What `v`'s answer decides, or undefined when it did not recognise the credential and the next verifier is asked. */
function decided(v: Verifier, r: VerifyResult): AuthResult | undefined {
  if (r.ok) return { ok: true, principal: r.principal, verifier: v.name };
  if (r.code === 'no_credential') return undefined;
  return { ok: false, code: r.code, verifier: v.name, ...(r.problem !== undefined && { problem: r.problem }) };
}
