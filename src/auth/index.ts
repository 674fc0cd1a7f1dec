/** The authentication module's public surface, for the pipeline's wiring. */
export type { AuthRequest, CredentialStrength, Principal, Verifier, VerifyFailure, VerifyResult } from './types.ts';
export type { AuthResult } from './chain.ts';
export { authenticate } from './chain.ts';
export { ANONYMOUS_ID, createAnonymousVerifier } from './anonymous.ts';
export { API_KEY_HEADER, hasCredential, readCredential } from './credentials.ts';
export { createStaticKeyVerifier, loadStaticKeys, parseStaticKeys } from './static-keys.ts';
export type { StaticKeyTable } from './static-keys.ts';
export { createJwtVerifier } from './jwt.ts';
export type { JwtVerifierOptions, OneTimeOptions } from './jwt.ts';
export { jwksFromFile, jwksFromText, jwksFromUrl } from './jwks.ts';
export { MemoryReplayStore } from './replay-store.ts';
export type { ReplayStore } from './replay-store.ts';
export { insufficientScopeChallenge, unauthorizedChallenge } from './challenge.ts';
export { strengthSatisfies } from './strength.ts';
export { buildVerifiers } from './from-policy.ts';
