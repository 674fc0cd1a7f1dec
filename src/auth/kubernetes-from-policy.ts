/**
 * The `kubernetes` verifier as a policy configures it: keys from a JWKS file
 * or from the API server's OIDC discovery endpoint (fetched, cached and
 * re-fetched as the JWT verifier's are), and an optional TokenReview, both
 * as the sidecar's own ServiceAccount.
 */
import { createRemoteJWKSet, customFetch } from 'jose';
import type { KubernetesAuthConfig } from '../config/policy/policy.ts';
import type { ConfigError } from '../config/policy/validate.ts';
import { apiServer } from './api-server.ts';
import { jwksFromFile } from './jwks.ts';
import { createKubernetesVerifier } from './kubernetes.ts';
import { tokenReviewer } from './token-review.ts';
import type { Verifier } from './types.ts';

/** Without TokenReview nothing can revoke a token before its exp, so a verified one is simply taken again for a minute. */
const ACCEPTED_WITHOUT_REVIEW_SECONDS = 60;

export async function kubernetesVerifier(
  k8s: KubernetesAuthConfig,
): Promise<{ ok: true; verifier: Verifier } | { ok: false; errors: ConfigError[] }> {
  const api = apiServer(k8s.apiServer);
  let keys;
  if (k8s.jwksFile !== undefined) {
    const file = await jwksFromFile(k8s.jwksFile);
    if (!file.ok) return file;
    keys = file.keys;
  } else {
    keys = createRemoteJWKSet(new URL('/openid/v1/jwks', k8s.apiServer.url), {
      timeoutDuration: k8s.apiServer.timeoutMs,
      cooldownDuration: k8s.jwksCooldownMs,
      cacheMaxAge: k8s.jwksCacheMaxAgeMs,
      // Through the API server client: its CA and the sidecar's token, which plain fetch would not send.
      [customFetch]: async () => {
        const answer = await api.call('GET', '/openid/v1/jwks');
        return new Response(answer === undefined ? null : JSON.stringify(answer.body), {
          status: answer?.status ?? 503,
        });
      },
    });
  }
  const reviewer = k8s.tokenReview.enabled
    ? tokenReviewer({ api, audience: k8s.audience, cacheSeconds: k8s.tokenReview.cacheSeconds })
    : undefined;
  return {
    ok: true,
    verifier: createKubernetesVerifier({
      issuer: k8s.issuer,
      audience: k8s.audience,
      keys,
      clockSkewSeconds: k8s.clockSkewSeconds,
      ...(reviewer !== undefined && { reviewer }),
      acceptedCacheMs:
        (k8s.tokenReview.enabled ? k8s.tokenReview.cacheSeconds : ACCEPTED_WITHOUT_REVIEW_SECONDS) * 1000,
    }),
  };
}
