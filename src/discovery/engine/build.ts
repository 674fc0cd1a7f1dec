import { FIELD_COUNT, fieldTerms, type ToolDoc } from './fields.ts';

/** One term's occurrences: documents ascending, and per document its count in each field. */
export interface Posting {
  readonly docs: Int32Array;
  /** `docs.length × FIELD_COUNT` counts, document-major. */
  readonly tf: Uint16Array;
}

/**
 * The immutable inverted index. Document ids follow tool names in ascending
 * code-unit order, so "lower id" and "earlier name" are the same tie-break.
 */
export interface IndexData {
  readonly names: readonly string[];
  readonly ids: ReadonlyMap<string, number>;
  /** Per field, the term count of each document. */
  readonly lengths: readonly Float64Array[];
  readonly postings: ReadonlyMap<string, Posting>;
  /** Every term, sorted, for prefix look-ups. */
  readonly vocabulary: readonly string[];
  /** Corpus statistics with every tool allowed, computed once. */
  readonly everyone: { readonly mask: Uint8Array; readonly stats: Stats };
}

export interface Stats {
  readonly count: number;
  readonly avgLength: Float64Array;
}

/**
 * Statistics over the allowed documents only. Summed in id order so that a
 * restricted search and a search on an index of the allowed tools alone get
 * bit-identical figures.
 */
export function allowedStats(lengths: readonly Float64Array[], mask: Uint8Array): Stats {
  const avgLength = new Float64Array(FIELD_COUNT);
  let count = 0;
  for (let d = 0; d < mask.length; d++) if (mask[d] === 1) count++;
  for (let f = 0; f < FIELD_COUNT; f++) {
    const len = lengths[f] as Float64Array;
    let sum = 0;
    for (let d = 0; d < mask.length; d++) if (mask[d] === 1) sum += len[d] as number;
    avgLength[f] = count > 0 ? sum / count : 0;
  }
  return { count, avgLength };
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The first tool of each name wins; later ones with the same name are ignored. */
function uniqueByName(tools: readonly ToolDoc[]): ToolDoc[] {
  const seen = new Set<string>();
  const out: ToolDoc[] = [];
  for (const t of tools) {
    if (t === null || typeof t !== 'object' || typeof t.name !== 'string' || seen.has(t.name)) continue;
    seen.add(t.name);
    out.push(t);
  }
  return out.sort((a, b) => byCodeUnits(a.name, b.name));
}

export function buildIndexData(tools: readonly ToolDoc[]): IndexData {
  const docs = uniqueByName(tools);
  const n = docs.length;
  const lengths = Array.from({ length: FIELD_COUNT }, () => new Float64Array(n));
  const pending = new Map<string, { docs: number[]; tf: number[] }>();
  const ids = new Map<string, number>();
  for (let d = 0; d < n; d++) {
    const doc = docs[d] as ToolDoc;
    ids.set(doc.name, d);
    const fields = fieldTerms(doc);
    const counts = new Map<string, Uint16Array>();
    for (let f = 0; f < FIELD_COUNT; f++) {
      const terms = fields[f] as string[];
      (lengths[f] as Float64Array)[d] = terms.length;
      for (const term of terms) {
        let c = counts.get(term);
        if (c === undefined) counts.set(term, (c = new Uint16Array(FIELD_COUNT)));
        if ((c[f] as number) < 65535) c[f] = (c[f] as number) + 1;
      }
    }
    for (const [term, c] of counts) {
      let p = pending.get(term);
      if (p === undefined) pending.set(term, (p = { docs: [], tf: [] }));
      p.docs.push(d);
      for (let f = 0; f < FIELD_COUNT; f++) p.tf.push(c[f] as number);
    }
  }
  const postings = new Map<string, Posting>();
  for (const [term, p] of pending) postings.set(term, { docs: Int32Array.from(p.docs), tf: Uint16Array.from(p.tf) });
  const mask = new Uint8Array(n).fill(1);
  return {
    everyone: { mask, stats: allowedStats(lengths, mask) },
    names: docs.map((t) => t.name),
    ids,
    lengths,
    postings,
    vocabulary: [...postings.keys()].sort(byCodeUnits),
  };
}
