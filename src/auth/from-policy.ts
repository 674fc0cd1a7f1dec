/**
 * Builds the verifier chain a policy's `authentication` section asks for, in
 * the fixed order static keys → Kubernetes → JWT → anonymous. The kinds
 * recognise disjoint credentials (opaque bearer or X-Api-Key / a JWT from the
 * cluster's issuer / any other JWT / none), so the order only matters in that
 * anonymous must come last.
 */
import type { AuthenticationConfig } from '../config/policy/policy.ts';
import type { ConfigError } from '../config/policy/validate.ts';
import { createAnonymousVerifier } from './anonymous.ts';
import { MemoryReplayStore } from './replay-store.ts';
import type { ReplayStore } from './replay-store.ts';
import { createStaticKeyVerifier, loadStaticKeys } from './static-keys.ts';
import type { Verifier } from './types.ts';

export interface VerifierDeps {
  /** Shared replay store (e.g. Redis); defaults to an in-process one bounded by `oneTime.maxEntries`. */
  readonly replayStore?: ReplayStore;
}

export type VerifiersResult = { ok: true; verifiers: readonly Verifier[] } | { ok: false; errors: ConfigError[] };

export async function buildVerifiers(auth: AuthenticationConfig, deps: VerifierDeps = {}): Promise<VerifiersResult> {
  const verifiers: Verifier[] = [];
  const errors: ConfigError[] = [];
  const under = (prefix: string, errs: readonly ConfigError[]) => {
    for (const e of errs) errors.push({ path: `${prefix}${e.path}`, message: e.message });
  };

  if (auth.staticKeys !== undefined) {
    const loaded = await loadStaticKeys(auth.staticKeys.file);
    if (loaded.ok)
      verifiers.push(createStaticKeyVerifier(loaded.table, { apiKeyHeader: auth.staticKeys.apiKeyHeader }));
    else under('/authentication/staticKeys/file', loaded.errors);
  }

  const k8s = auth.kubernetes;
  if (k8s !== undefined) {
    const { kubernetesVerifier } = await import('./kubernetes-from-policy.ts');
    const built = await kubernetesVerifier(k8s);
    if (built.ok) verifiers.push(built.verifier);
    else under('/authentication/kubernetes/jwksFile', built.errors);
  }

  const jwt = auth.jwt;
  if (jwt !== undefined) {
    // Loaded here: jose is only resident in sidecars whose policy verifies JWTs.
    const [{ jwksFromFile, jwksFromUrl }, { createJwtVerifier }] = await Promise.all([
      import('./jwks.ts'),
      import('./jwt.ts'),
    ]);
    const source =
      jwt.jwksUrl !== undefined
        ? jwksFromUrl(jwt.jwksUrl, {
            timeoutMs: jwt.jwksTimeoutMs,
            cooldownMs: jwt.jwksCooldownMs,
            cacheMaxAgeMs: jwt.jwksCacheMaxAgeMs,
          })
        : await jwksFromFile(jwt.jwksFile ?? '');
    if (source.ok) {
      const oneTime = jwt.oneTime;
      verifiers.push(
        createJwtVerifier({
          issuer: jwt.issuer,
          audience: jwt.audience,
          keys: source.keys,
          algorithms: jwt.algorithms,
          clockSkewSeconds: jwt.clockSkewSeconds,
          ...(oneTime === undefined
            ? {}
            : {
                oneTime: {
                  issuers: oneTime.issuers,
                  ...(oneTime.claim === undefined ? {} : { claim: oneTime.claim }),
                  maxLifetimeSeconds: oneTime.maxLifetimeSeconds,
                  store: deps.replayStore ?? new MemoryReplayStore({ maxEntries: oneTime.maxEntries }),
                },
              }),
        }),
      );
    } else {
      under(jwt.jwksUrl !== undefined ? '/authentication/jwt/jwksUrl' : '/authentication/jwt/jwksFile', source.errors);
    }
  }

  if (auth.anonymous.enabled) verifiers.push(createAnonymousVerifier(auth.anonymous.scopes));
  return errors.length > 0 ? { ok: false, errors } : { ok: true, verifiers: Object.freeze(verifiers) };
}
