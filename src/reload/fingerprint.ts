import { realpath, stat } from 'node:fs/promises';

/**
 * What the poll fallback compares between ticks. The resolved path changes
 * on every kubelet `..data` swap (each version lives in its own timestamped
 * directory); inode, size and times change on a plain rewrite or rename.
 * Never throws: a missing file is a fingerprint too, so its disappearance
 * and its return are both changes.
 */
export interface Fingerprint {
  readonly key: string;
  /** The path with every symlink resolved, when it resolves. */
  readonly resolved: string | undefined;
}

export async function fingerprint(path: string): Promise<Fingerprint> {
  try {
    const resolved = await realpath(path);
    const s = await stat(resolved, { bigint: true });
    return { key: `${resolved}\0${s.dev}:${s.ino}\0${s.size}\0${s.mtimeNs}\0${s.ctimeNs}`, resolved };
  } catch (err) {
    return { key: `missing\0${errorCode(err)}`, resolved: undefined };
  }
}

/** Identifies a directory inode, so a directory deleted and recreated under the same name is noticed. */
export async function directoryIdentity(dir: string): Promise<string | undefined> {
  try {
    const s = await stat(dir, { bigint: true });
    return s.isDirectory() ? `${s.dev}:${s.ino}` : undefined;
  } catch {
    return undefined;
  }
}

function errorCode(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : 'unknown';
}
