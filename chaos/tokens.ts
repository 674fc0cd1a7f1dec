/** One-time JWTs from a local issuer whose public key toolgate reads from a JWKS file. */
import { writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';

export const ISSUER = 'https://idp.chaos.test/';
export const AUDIENCE = 'https://mcp.chaos.test/';
export const ONE_TIME_CLAIM = 'one_time';

export interface Issuer {
  /** A fresh one-time token for `subject`, valid for a minute. */
  token(subject: string): Promise<string>;
}

export async function createIssuer(jwksPath: string): Promise<Issuer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  await writeFile(
    jwksPath,
    JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'chaos', alg: 'ES256', use: 'sig' }] }),
  );
  const key: CryptoKey = privateKey;
  return {
    token: (subject) =>
      new SignJWT({ [ONE_TIME_CLAIM]: true })
        .setProtectedHeader({ alg: 'ES256', kid: 'chaos' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject(subject)
        .setJti(randomUUID())
        .setIssuedAt()
        .setExpirationTime('60s')
        .sign(key),
  };
}
