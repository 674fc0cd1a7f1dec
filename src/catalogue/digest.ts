import { canonicalize, sha256Hex, type CanonicalResult } from '../json/canonical.ts';

/**
 * The digests built on canonical JSON (json/canonical.ts). A contract digest
 * names exactly what a client was shown of a tool, so two replicas (or two
 * syncs) that saw the same contract agree on its digest.
 */

/** The contract fields, in no particular order: canonical JSON sorts them. */
const CONTRACT_FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;

export type DigestResult =
  | { readonly ok: true; readonly digest: string }
  | { readonly ok: false; readonly code: Extract<CanonicalResult, { ok: false }>['code'] };

/**
 * SHA-256 over the canonical JSON of the tool's contract fields; fields the
 * tool lacks are omitted, and everything else (icons, _meta, execution …) is
 * left out so cosmetic upstream changes do not look like contract changes.
 */
export function toolDigest(tool: Readonly<Record<string, unknown>>): DigestResult {
  const contract: Record<string, unknown> = {};
  for (const f of CONTRACT_FIELDS) {
    if (Object.hasOwn(tool, f) && tool[f] !== undefined) contract[f] = tool[f];
  }
  const c = canonicalize(contract);
  return c.ok ? { ok: true, digest: sha256Hex(c.text) } : c;
}

/** SHA-256 over the canonical JSON array of the tool digests, sorted. */
export function catalogueDigest(toolDigests: Iterable<string>): string {
  const sorted = [...toolDigests].sort();
  return sha256Hex(JSON.stringify(sorted));
}
