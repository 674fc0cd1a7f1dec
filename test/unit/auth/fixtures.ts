import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { CryptoKey, JWK, JWTPayload } from 'jose';
import type { AuthRequest } from '../../../src/auth/types.ts';

export interface KeyPair {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

export async function keyPair(kid: string, alg = 'ES256'): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicJwk };
}

export const ISSUER = 'https://idp.test/';
export const AUDIENCE = 'https://mcp.test/';

export interface SignOptions {
  readonly key: KeyPair;
  readonly claims?: JWTPayload;
  readonly issuer?: string;
  readonly audience?: string;
  readonly subject?: string | undefined;
  /** Seconds from now; omit for 300. `null` leaves exp out. */
  readonly expiresIn?: number | null;
  readonly notBeforeIn?: number;
}

export async function sign(o: SignOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  let jwt = new SignJWT({ ...o.claims })
    .setProtectedHeader({ alg: o.key.alg, kid: o.key.kid })
    .setIssuer(o.issuer ?? ISSUER)
    .setAudience(o.audience ?? AUDIENCE)
    .setIssuedAt(now);
  const subject = 'subject' in o ? o.subject : 'agent-1';
  if (subject !== undefined) jwt = jwt.setSubject(subject);
  if (o.expiresIn !== null) jwt = jwt.setExpirationTime(now + (o.expiresIn ?? 300));
  if (o.notBeforeIn !== undefined) jwt = jwt.setNotBefore(now + o.notBeforeIn);
  return jwt.sign(o.key.privateKey);
}

export function bearer(token: string): AuthRequest {
  return { headers: { authorization: `Bearer ${token}` } };
}
