import { glossaryFor } from '../text/gloss.ts';
import { FIELD_COUNT, fieldTerms, fieldTexts, proseOf, type FieldTexts, type ToolDoc } from './fields.ts';
import type { RankParams } from './params.ts';
import { permit, type Permit } from './permit.ts';
import { normsFor, saturatedTf } from './bm25f.ts';
import { GramBuilder, type GramIndex } from './grams.ts';

/** One term's occurrences: documents ascending, and per document its count in each field. */
export interface Posting {
  readonly docs: Int32Array;
  /** `docs.length × FIELD_COUNT` counts, document-major. */
  readonly tf: Uint16Array;
  /**
   * Per document, the saturated BM25F term frequency with every tool allowed,
   * and which fields matched: the unrestricted search, the common case, then
   * scores a posting in one multiply-add per document.
   */
  readonly full: Float64Array;
  readonly bits: Uint8Array;
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
  /** Per document, its distinct terms and their field counts: what feedback reads. */
  readonly forward: readonly DocTerms[];
  /** Every term, sorted, for prefix look-ups. */
  readonly vocabulary: readonly string[];
  /** Corpus statistics with every tool allowed, computed once. */
  readonly everyone: Permit;
  /** Character n-grams of each tool, for re-scoring; absent when that is off. */
  readonly grams: GramIndex | undefined;
}

interface DocTerms {
  readonly terms: readonly string[];
  /** Per term, its field-weighted share of the document's field-weighted length. */
  readonly share: Float64Array;
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

export function buildIndexData(tools: readonly ToolDoc[], params: RankParams): IndexData {
  const docs = uniqueByName(tools);
  const n = docs.length;
  const texts = docs.map(fieldTexts);
  const glossary = glossaryFor(texts.flatMap(proseOf));
  const lengths = Array.from({ length: FIELD_COUNT }, () => new Float64Array(n));
  const pending = new Map<string, { docs: number[]; tf: number[] }>();
  const ids = new Map<string, number>();
  const forward: DocTerms[] = [];
  const grams = params.gramWeight > 0 && params.gramDepth > 0 ? new GramBuilder(params.weights) : undefined;
  for (let d = 0; d < n; d++) {
    const doc = docs[d] as ToolDoc;
    ids.set(doc.name, d);
    const fields = fieldTerms(texts[d] as FieldTexts, glossary, grams?.words);
    grams?.endTool();
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
    let weighted = 0;
    for (let f = 0; f < FIELD_COUNT; f++)
      weighted += (params.weights[f] as number) * ((lengths[f] as Float64Array)[d] as number);
    const share = new Float64Array(counts.size);
    let t = 0;
    for (const [term, c] of counts) {
      let w = 0;
      for (let f = 0; f < FIELD_COUNT; f++) w += (params.weights[f] as number) * (c[f] as number);
      share[t++] = weighted > 0 ? w / weighted : 0;
      let p = pending.get(term);
      if (p === undefined) pending.set(term, (p = { docs: [], tf: [] }));
      p.docs.push(d);
      for (let f = 0; f < FIELD_COUNT; f++) p.tf.push(c[f] as number);
    }
    forward.push({ terms: [...counts.keys()], share });
  }
  const everyone = permit({ names: docs.map((t) => t.name), ids, lengths }, undefined);
  const norms = normsFor(everyone.stats.avgLength, params);
  const postings = new Map<string, Posting>();
  for (const [term, p] of pending) {
    const tf = Uint16Array.from(p.tf);
    const full = new Float64Array(p.docs.length);
    const bits = new Uint8Array(p.docs.length);
    for (let i = 0; i < p.docs.length; i++) {
      for (let f = 0; f < FIELD_COUNT; f++)
        if ((tf[i * FIELD_COUNT + f] as number) > 0) bits[i] = (bits[i] as number) | (1 << f);
      full[i] = saturatedTf(tf, i * FIELD_COUNT, bits[i] as number, lengths, p.docs[i] as number, norms);
    }
    postings.set(term, { docs: Int32Array.from(p.docs), tf, full, bits });
  }
  return {
    everyone,
    names: docs.map((t) => t.name),
    ids,
    lengths,
    postings,
    forward,
    vocabulary: [...postings.keys()].sort(byCodeUnits),
    grams: grams?.finish(),
  };
}
