/**
 * The key files a policy names, as `toolgate policy validate` reports them.
 * By default validate does not read them: it runs in CI before the policy is
 * applied, where the mounted Secrets never exist, so each is noted instead.
 * With `--check-files` they are read as a running toolgate reads them, and a
 * problem names the file and what to do about it.
 */
import type { ConfigError, Policy } from '../config/policy/policy.ts';
import { referencedFiles, type ReferencedFile } from '../config/policy/policy.ts';

/** One note per file left unread, in the findings' `pointer: message` shape. */
export function unreadFiles(policy: Policy): ConfigError[] {
  return referencedFiles(policy).map((f) => ({
    path: f.pointer,
    message: `note: ${f.path} not read (--check-files reads it)`,
  }));
}

/** The load's errors, each one about a named file saying which file it is and, if unreadable, what to do. */
export function withFileHints(errors: readonly ConfigError[], policy: Policy): ConfigError[] {
  const files = referencedFiles(policy);
  return errors.map((e) => {
    const f = files.find((x) => e.path === x.pointer || e.path.startsWith(`${x.pointer}/`));
    if (f === undefined) return e;
    return {
      path: e.path,
      message:
        e.path === f.pointer && e.message.startsWith('read:')
          ? `${e.message}; ${remedy(f)}`
          : `${e.message} (in ${f.path})`,
    };
  });
}

function remedy(f: ReferencedFile): string {
  return `mount it at that path or correct ${f.pointer.slice(1).replaceAll('/', '.')}, or validate without --check-files where it is not mounted`;
}
