/**
 * Principals and the verifier contract. A verifier never throws on bad input
 * and reports failures only as closed codes, so nothing about a credential or
 * an exception can reach a caller or a log line through it.
 */
import type { CredentialProblem } from '../errors.ts';

export type { CredentialProblem };

/** Ordered weakest first; a tool's security level names the weakest it accepts. */
export type CredentialStrength = 'anonymous' | 'static' | 'short_lived' | 'one_time';

export interface Principal {
  readonly id: string;
  readonly scopes: ReadonlySet<string>;
  readonly credentialStrength: CredentialStrength;
  /** The verified JWT payload, for grant conditions; absent for other credentials. */
  readonly claims?: Readonly<Record<string, unknown>>;
}

export interface AuthRequest {
  /** The Authorization header, when the caller already has it at hand; else read from `headers`. */
  readonly authorization?: string;
  /** Request headers with lower-case names, as node:http gives them. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/**
 * `no_credential`: this verifier found no credential of its kind (the chain
 * moves on). `bad_credential`: it recognised its kind and refused it (final).
 * `unavailable`: it recognised a credential that verifies but could not
 * finish checking it (a one-time token whose reuse cannot be ruled out right
 * now): final, and retryable.
 */
export type VerifyFailure = 'no_credential' | 'bad_credential' | 'unavailable';

export type VerifyResult =
  | { ok: true; principal: Principal }
  | { ok: false; code: VerifyFailure; problem?: CredentialProblem };

export interface Verifier {
  /** Short stable name for metrics and logs: `static_key`, `jwt`, `anonymous`. */
  readonly name: string;
  verify(req: AuthRequest): VerifyResult | Promise<VerifyResult>;
}
