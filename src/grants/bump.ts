import type { GrantRow } from '../config/policy/grant-row.ts';
import type { FileGrantStore } from './file-store.ts';
import type { RedisGrantSource } from './sources/redis.ts';

/** Where the revision lives: the file store in process, or the domain's keys in Redis (its grant source). */
export type RevisionHome =
  | { readonly kind: 'file'; readonly store: FileGrantStore; readonly rows: () => readonly GrantRow[] }
  | { readonly kind: 'redis'; readonly source: RedisGrantSource }
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
        const bumped = await home.source.bump();
        return bumped.ok ? bumped.revision : undefined;
      };
    case 'none':
      return () => Promise.resolve(undefined);
  }
}
