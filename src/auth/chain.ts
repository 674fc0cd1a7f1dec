/**
 * Runs verifiers in order. The first that recognises the credential decides,
 * and a recognised-but-bad credential is final: a later verifier never gets to
 * accept what an earlier one refused. A credential nobody recognises is bad,
 * not absent, so it can never fall through to anonymous access.
 */
import { hasCredential } from './credentials.ts';
import type { AuthRequest, CredentialProblem, Principal, Verifier, VerifyFailure } from './types.ts';

export type AuthResult =
  | { ok: true; principal: Principal; verifier: string }
  | { ok: false; code: VerifyFailure; verifier: string | undefined; problem?: CredentialProblem };

export async function authenticate(verifiers: readonly Verifier[], req: AuthRequest): Promise<AuthResult> {
  for (const v of verifiers) {
    let r;
    try {
      r = await v.verify(req);
    } catch {
      // The contract says verifiers never throw; if one does, fail closed.
      return { ok: false, code: 'bad_credential', verifier: v.name };
    }
    if (r.ok) return { ok: true, principal: r.principal, verifier: v.name };
    if (r.code !== 'no_credential')
      return { ok: false, code: r.code, verifier: v.name, ...(r.problem !== undefined && { problem: r.problem }) };
  }
  return { ok: false, code: hasCredential(req) ? 'bad_credential' : 'no_credential', verifier: undefined };
}
