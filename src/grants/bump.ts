import type { RedisClient } from '../cache/redis.ts';
import type { GrantRow } from '../config/policy/grant-row.ts';
import type { FileGrantStore } from './file-store.ts';

/** Where the revision lives: the file store in process, or the domain's keys in Redis. */
export type RevisionHome =
  | { readonly kind: 'file'; readonly store: FileGrantStore; readonly rows: () => readonly GrantRow[] }
  | { readonly kind: 'redis'; readonly client: RedisClient; readonly domain: string }
  | { readonly kind: 'none' };

/**
 * Moves the control revision on without a grant change, so that cursors and
 * cached lists made before something else changed (an approval) are refused
 * as if grants had. Resolves to the new revision, or undefined when it could
 * not be moved.
 */
export function revisionBumper(home: RevisionHome): () => Promise<number | undefined> {
  switch (home.kind) {
    case 'file':
      return () => Promise.resolve(home.store.replaceRows(home.rows()));
    case 'redis':
      return async () => {
        // Loaded here: the Redis grant source pulls in ioredis, which only a Redis URL may load.
        const { createRedisSource } = await import('./sources/redis.ts');
        const bumped = await createRedisSource(home.client, home.domain)?.bump();
        return bumped?.ok === true ? bumped.revision : undefined;
      };
    case 'none':
      return () => Promise.resolve(undefined);
  }
}
