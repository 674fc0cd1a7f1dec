/**
 * Static agent keys. A mounted Secret file lists SHA-256 hashes of keys, each
 * with the principal and scopes it stands for; the keys themselves never
 * appear in configuration. A presented key is hashed, looked up by hash, and
 * compared in constant time.
 *
 * File (YAML or JSON):
 *   keys:
 *     - sha256: <64 lower-case hex digits>   # printf %s "$KEY" | sha256sum
 *       principal: agent-billing
 *       scopes: [invoices.read]
 *       description: optional note
 */
import { hash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isServiceAccountScope, MAX_ROW_SCOPES, PRINCIPAL_PATTERN, SCOPE_PATTERN } from '../config/policy/grant-row.ts';
import { compileSchema, parseYaml, pointer, validateWith } from '../config/policy/validate.ts';
import type { ConfigError } from '../config/policy/validate.ts';
import { bearerHeader, isJwtShaped, readCredential, soleAuthorization } from './credentials.ts';
import { makePrincipal } from './principal.ts';
import type { Principal, Verifier, VerifyResult } from './types.ts';

interface StaticKeyEntry {
  readonly hash: Buffer;
  readonly principal: Principal;
  /** The verifier's answer for this key, made once at load: a key's first call allocates nothing for it. */
  readonly verified: VerifyResult;
}

/** Keyed by lower-case hex SHA-256 of the key. */
export type StaticKeyTable = ReadonlyMap<string, StaticKeyEntry>;

export type StaticKeysResult = { ok: true; table: StaticKeyTable } | { ok: false; errors: ConfigError[] };

const MAX_KEY_FILE_BYTES = 4 * 1024 * 1024;

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['keys'],
  properties: {
    keys: {
      type: 'array',
      maxItems: 10_000,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['sha256', 'principal'],
        properties: {
          sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
          principal: { type: 'string', pattern: PRINCIPAL_PATTERN, not: { const: '*' } },
          scopes: {
            type: 'array',
            maxItems: MAX_ROW_SCOPES * 4,
            uniqueItems: true,
            items: { type: 'string', pattern: SCOPE_PATTERN },
          },
          description: { type: 'string', maxLength: 1000 },
        },
      },
    },
  },
} as const;

const validateKeys = compileSchema(schema);

interface RawKeys {
  keys: { sha256: string; principal: string; scopes?: string[] }[];
}

export function parseStaticKeys(text: string): StaticKeysResult {
  const parsed = parseYaml(text, MAX_KEY_FILE_BYTES);
  if (!parsed.ok) return parsed;
  const checked = validateWith<RawKeys>(validateKeys, parsed.value);
  if (!checked.ok) return checked;
  const table = new Map<string, StaticKeyEntry>();
  const errors: ConfigError[] = [];
  checked.value.keys.forEach((k, i) => {
    if (table.has(k.sha256)) {
      // Two principals behind one key would make the key's identity ambiguous.
      errors.push({ path: pointer('keys', i, 'sha256'), message: 'duplicate: the same key hash is listed twice' });
      return;
    }
    const reserved = (k.scopes ?? []).findIndex(isServiceAccountScope);
    if (reserved >= 0) {
      // A namespace-wide grant (`*` with system:serviceaccounts:<ns>) must mean ServiceAccounts of that namespace only.
      errors.push({
        path: pointer('keys', i, 'scopes', reserved),
        message:
          'scope: system:serviceaccounts scopes belong to Kubernetes ServiceAccount tokens and cannot be given to a key',
      });
      return;
    }
    const principal = makePrincipal(k.principal, k.scopes ?? [], 'static');
    table.set(
      k.sha256,
      Object.freeze({
        hash: Buffer.from(k.sha256, 'hex'),
        principal,
        verified: Object.freeze({ ok: true, principal }),
      }),
    );
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, table };
}

export async function loadStaticKeys(path: string): Promise<StaticKeysResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return {
      ok: false,
      errors: [
        {
          path: '',
          message: `read: cannot read the static key file ${path}${typeof code === 'string' ? ` (${code})` : ''}`,
        },
      ],
    };
  }
  return parseStaticKeys(text);
}

export interface StaticKeyOptions {
  /** Also accept the key in an `X-Api-Key` header (default: Authorization: Bearer only). */
  readonly apiKeyHeader?: boolean;
}

const NO_CREDENTIAL: VerifyResult = Object.freeze({ ok: false, code: 'no_credential' });
const BAD_CREDENTIAL: VerifyResult = Object.freeze({ ok: false, code: 'bad_credential' });

/**
 * Recognises bearer tokens that are not JWT-shaped (and, when enabled,
 * `X-Api-Key`). A recognised key that is not in the table is a bad credential.
 */
export function createStaticKeyVerifier(table: StaticKeyTable, options: StaticKeyOptions = {}): Verifier {
  const apiKeyHeader = options.apiKeyHeader ?? false;
  // Keys that verified, so an agent's every call does not pay for a hash.
  // Only successes enter (a guess never does), and each is a key of this
  // verifier's table, which never changes: the table bounds the map, and
  // nothing needs evicting.
  const verified = new Map<string, VerifyResult>();
  // The same, by the Authorization header as agents send it: a hit reads no
  // header and matches no pattern. Only the canonical spelling enters.
  const byHeader = new Map<string, VerifyResult>();
  return {
    name: 'static_key',
    verify(req): VerifyResult {
      const header = soleAuthorization(req);
      const seen = header === undefined ? undefined : byHeader.get(header);
      if (seen !== undefined) return seen;
      const cred = readCredential(req);
      const mine = (cred.kind === 'bearer' && !isJwtShaped(cred.token)) || (cred.kind === 'api_key' && apiKeyHeader);
      if (!mine) return NO_CREDENTIAL;
      const known = verified.get(cred.token);
      if (known !== undefined) return known;
      const digest = hash('sha256', cred.token, 'buffer');
      const entry = table.get(digest.toString('hex'));
      if (entry === undefined || !timingSafeEqual(digest, entry.hash)) {
        return BAD_CREDENTIAL;
      }
      verified.set(cred.token, entry.verified);
      if (cred.kind === 'bearer') byHeader.set(bearerHeader(cred.token), entry.verified);
      return entry.verified;
    },
  };
}
