/**
 * Whether the API server still stands behind a ServiceAccount token: a
 * TokenReview, which fails once the Pod (or Secret) the token is bound to is
 * gone, though its signature and expiry still check out. Answers are cached
 * by the token's digest for at most `cacheSeconds` (never past the token's
 * own expiry), so a deleted Pod's token stops working within that bound and
 * the API server sees one review per token per bound, not one per request.
 */
import { createHash } from 'node:crypto';
import { isRecord } from '../json/record.ts';
import { Lru } from '../bounded/lru.ts';
import type { ApiServer } from './api-server.ts';

type ReviewOutcome = 'authenticated' | 'rejected' | 'unavailable';

export interface TokenReviewer {
  review(token: string, username: string, expiresAtMs: number): Promise<ReviewOutcome>;
}

export interface TokenReviewOptions {
  readonly api: ApiServer;
  readonly audience: readonly string[];
  readonly cacheSeconds: number;
  readonly maxEntries?: number;
  readonly now?: () => number;
}

export function tokenReviewer(options: TokenReviewOptions): TokenReviewer {
  const cache = new Lru<string, { outcome: 'authenticated' | 'rejected'; until: number }>(options.maxEntries ?? 10_000);
  const now = options.now ?? Date.now;
  return {
    async review(token, username, expiresAtMs) {
      const key = createHash('sha256').update(token).digest('base64url');
      const at = now();
      const hit = cache.get(key);
      if (hit !== undefined && hit.until > at) return hit.outcome;
      const answer = await options.api.call('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token, audiences: options.audience },
      });
      // Anything but a TokenReview answer (a 403 for missing RBAC, a 5xx, no answer) says nothing about the token.
      if (answer === undefined || answer.status !== 201 || !isRecord(answer.body) || !isRecord(answer.body.status))
        return 'unavailable';
      const status = answer.body.status;
      const user = isRecord(status.user) ? status.user : {};
      const outcome = status.authenticated === true && user.username === username ? 'authenticated' : 'rejected';
      cache.set(key, { outcome, until: Math.min(at + options.cacheSeconds * 1000, expiresAtMs) });
      return outcome;
    },
  };
}
