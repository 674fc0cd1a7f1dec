import { createHash } from 'node:crypto';

/** How a static-keys file lists a key: the SHA-256 of its text, in hex. */
export function sha256(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
