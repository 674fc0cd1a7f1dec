/**
 * Where JWT verification keys come from: a JWKS file (read once, at load) or
 * a JWKS URL (fetched lazily with a timeout, cached, and re-fetched no more
 * often than the cooldown when an unknown `kid` shows up).
 */
import { readFile } from 'node:fs/promises';
import { base64url, createLocalJWKSet, createRemoteJWKSet } from 'jose';
import type { JWK, JWTVerifyGetKey } from 'jose';
import type { ConfigError } from '../config/policy/validate.ts';
import { isRecord } from '../json/record.ts';

export type KeySourceResult = { ok: true; keys: JWTVerifyGetKey } | { ok: false; errors: ConfigError[] };

export interface RemoteJwksOptions {
  readonly timeoutMs: number;
  readonly cooldownMs: number;
  readonly cacheMaxAgeMs: number;
}

const MAX_JWKS_FILE_BYTES = 1024 * 1024;

export function jwksFromUrl(url: string, options: RemoteJwksOptions): KeySourceResult {
  if (!URL.canParse(url))
    return { ok: false, errors: [{ path: '', message: 'url: the JWKS URL is not an absolute URL' }] };
  return {
    ok: true,
    keys: createRemoteJWKSet(new URL(url), {
      timeoutDuration: options.timeoutMs,
      cooldownDuration: options.cooldownMs,
      cacheMaxAge: options.cacheMaxAgeMs,
    }),
  };
}

export async function jwksFromFile(path: string): Promise<KeySourceResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return {
      ok: false,
      errors: [
        { path: '', message: `read: cannot read the JWKS file ${path}${typeof code === 'string' ? ` (${code})` : ''}` },
      ],
    };
  }
  return jwksFromText(text);
}

function bad(message: string): KeySourceResult {
  return { ok: false, errors: [{ path: '', message }] };
}

/**
 * Public keys go through jose's local JWKS; `oct` keys (only usable when HS*
 * is explicitly allowed) are served by a small selector of our own, since
 * jose's JWKS helpers accept public keys only.
 */
export function jwksFromText(text: string): KeySourceResult {
  if (Buffer.byteLength(text, 'utf8') > MAX_JWKS_FILE_BYTES)
    return bad(`jwks: file is larger than ${MAX_JWKS_FILE_BYTES} bytes`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return bad('jwks: the file is not valid JSON');
  }
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { keys?: unknown }).keys)) {
    return bad('jwks: expected a JSON Web Key Set object with a "keys" array');
  }
  const all = (doc as { keys: unknown[] }).keys;
  if (!all.every(isRecord)) return bad('jwks: every key must be an object');
  const jwks = all as JWK[];
  const secrets = jwks.filter((k) => k.kty === 'oct');
  if (secrets.some((k) => typeof k.k !== 'string')) return bad('jwks: an oct key has no "k"');
  let publicKeys: JWTVerifyGetKey;
  try {
    publicKeys = createLocalJWKSet({ keys: jwks.filter((k) => k.kty !== 'oct') });
  } catch {
    return bad('jwks: the key set is malformed');
  }
  if (secrets.length === 0) return { ok: true, keys: publicKeys };
  const keys: JWTVerifyGetKey = (header, token) => {
    if (typeof header.alg !== 'string' || !header.alg.startsWith('HS')) return publicKeys(header, token);
    const matches = secrets.filter(
      (k) =>
        (header.kid === undefined || k.kid === header.kid) &&
        (k.alg === undefined || k.alg === header.alg) &&
        (k.use === undefined || k.use === 'sig'),
    );
    const only = matches.length === 1 ? matches[0] : undefined;
    if (only === undefined) throw new Error('no single matching key');
    const secret = base64url.decode(only.k as string);
    // RFC 7518 §3.2: the key must be at least as long as the hash output.
    if (secret.length * 8 < Number(header.alg.slice(2))) throw new Error('key too short');
    return secret;
  };
  return { ok: true, keys };
}
