import { FIELD_COUNT } from './fields.ts';

/** Corpus statistics over the documents a caller may see. */
export interface Stats {
  readonly count: number;
  readonly avgLength: Float64Array;
}

/** The permitted view of an index: which documents count, and their statistics. */
export interface Permit {
  readonly mask: Uint8Array;
  readonly stats: Stats;
  /** The allowed documents' ids, in the first `stats.count` entries. */
  readonly admitted: Int32Array;
}

/** Where a permit is written: reused across searches, so restricted searches allocate nothing per tool. */
export interface PermitBuffers {
  readonly mask: Uint8Array;
  readonly admitted: Int32Array;
}

export type Allowed = ReadonlySet<string> | ((name: string) => boolean);

interface Catalogue {
  readonly names: readonly string[];
  readonly ids: ReadonlyMap<string, number>;
  readonly lengths: readonly Float64Array[];
}

/**
 * Applies permissions before any statistic is taken: the mask and the field
 * averages come from the allowed documents alone. Field lengths are whole
 * term counts, so their sums are exact in any order (far below 2^53) and the
 * averages are bit-identical to an index built from the allowed tools alone,
 * whatever order a set yields its names in; one pass over the allowed names
 * then does both jobs.
 */
export function permit(catalogue: Catalogue, allowed: Allowed | undefined, into?: PermitBuffers): Permit {
  const { names, ids, lengths } = catalogue;
  const mask = into?.mask ?? new Uint8Array(names.length);
  const admitted = into?.admitted ?? new Int32Array(names.length);
  let count = 0;
  if (allowed === undefined) {
    mask.fill(1);
    for (let d = 0; d < names.length; d++) admitted[count++] = d;
  } else if (typeof allowed === 'function') {
    for (let d = 0; d < names.length; d++) {
      if (!admits(allowed, names[d] as string)) continue;
      mask[d] = 1;
      admitted[count++] = d;
    }
  } else {
    try {
      for (const name of allowed) {
        const d = ids.get(name);
        if (d === undefined || mask[d] === 1) continue;
        mask[d] = 1;
        admitted[count++] = d;
      }
    } catch {
      // A set that fails partway (or is no iterable at all) admits nothing: permissions fail closed.
      for (let i = 0; i < count; i++) mask[admitted[i] as number] = 0;
      count = 0;
    }
  }
  const avgLength = new Float64Array(FIELD_COUNT);
  for (let f = 0; f < FIELD_COUNT; f++) {
    const field = lengths[f] as Float64Array;
    let sum = 0;
    for (let i = 0; i < count; i++) sum += field[admitted[i] as number] as number;
    avgLength[f] = count > 0 ? sum / count : 0;
  }
  return { mask, stats: { count, avgLength }, admitted };
}

/** Clears a permit's mask, leaving its buffers ready for the next search. */
export function release(p: Permit): void {
  for (let i = 0; i < p.stats.count; i++) p.mask[p.admitted[i] as number] = 0;
}

/** A predicate that throws denies: permissions fail closed, and search never throws. */
function admits(allowed: (name: string) => boolean, name: string): boolean {
  try {
    // oxlint-disable-next-line no-unnecessary-boolean-literal-compare -- fails closed: only true admits, whatever a predicate returns at run time
    return allowed(name) === true;
  } catch {
    return false;
  }
}
