import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { ReplayStore } from '../auth/replay-store.ts';
import { buildPolicyInForce, type PolicyInForce } from '../auth/policy-in-force.ts';
import { loadPolicyFile, referencedFiles } from '../config/policy/policy.ts';
import { fingerprint } from './fingerprint.ts';
import type { PolicyLoader, WatchedFile } from './watch.ts';

export interface PolicyLoaderOptions {
  /**
   * One store for every version, so a one-time token spent before a reload
   * is still spent after it. Without it each version gets a fresh store.
   */
  readonly replayStore?: ReplayStore;
}

/**
 * The PolicyLoader for toolgate's PolicyInForce. Its digest is the policy's
 * sourceDigest combined with the contents of the local files the policy
 * names (static key file, JWKS file), so rotating a key in the same
 * ConfigMap is a change even though the policy text is not. Those files are
 * hashed before the PolicyInForce is built from them: the digest may lag the
 * built content (costing one harmless re-apply later) but never lead it,
 * which would make a real change look like a re-save. The files are named
 * to the watcher too, which watches them as it watches the policy. The
 * generation is not needed here: the grant store assigns revisions when rows
 * are replaced.
 */
export function policyLoader(opts: PolicyLoaderOptions = {}): PolicyLoader<PolicyInForce> {
  return async (path) => {
    const loaded = await loadPolicyFile(path);
    if (!loaded.ok) return loaded;
    const referenced = referencedFiles(loaded.policy);
    // Fingerprinted before anything reads them, so the watcher notices a change made during this load.
    const watched: WatchedFile[] = await Promise.all(
      referenced.map(async (f) => ({ path: f.path, fingerprint: (await fingerprint(f.path)).key })),
    );
    const files = await hashFiles(referenced.map((f) => [f.pointer, f.path]));
    const built = await buildPolicyInForce(loaded.policy, opts.replayStore);
    if (!built.ok) return { ...built, files: watched };
    const sourceDigest = loaded.policy.sourceDigest;
    return {
      ok: true,
      value: built.policyInForce,
      digest: files.length === 0 ? sourceDigest : combine(sourceDigest, files),
      files: watched,
    };
  };
}

/** Keyed by role (where the policy names the file), not path: under a ConfigMap the resolved paths change with every version. */
async function hashFiles(files: readonly [string, string][]): Promise<string[]> {
  return Promise.all(
    files.map(async ([role, path]) => {
      try {
        return `${role}:${createHash('sha256')
          .update(await readFile(path))
          .digest('hex')}`;
      } catch {
        return `${role}:unreadable`;
      }
    }),
  );
}

function combine(sourceDigest: string, files: readonly string[]): string {
  return createHash('sha256')
    .update([sourceDigest, ...files].join('\n'))
    .digest('hex');
}
