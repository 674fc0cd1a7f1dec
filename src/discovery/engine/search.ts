import { analyze } from '../text/analyze.ts';
import { idf, normsFor, saturatedTf, type Norms } from './bm25f.ts';
import type { IndexData, Posting } from './build.ts';
import { feedbackTerms } from './feedback.ts';
import { gramCosines, gramScratch, type GramScratch } from './gram-score.ts';
import { FIELD_COUNT, FIELDS, type FieldName } from './fields.ts';
import type { RankParams } from './params.ts';
import { permit, release, type Allowed, type PermitBuffers, type Stats } from './permit.ts';

interface SearchHit {
  readonly name: string;
  readonly score: number;
  readonly matched: readonly FieldName[];
}

export interface SearchResult {
  readonly results: readonly SearchHit[];
  /** How many allowed tools matched at all. */
  readonly total: number;
}

export type { Allowed } from './permit.ts';

/** Queries are validated upstream; this only bounds the work a huge one could cause. */
const MAX_QUERY_TERMS = 128;

const EMPTY: SearchResult = Object.freeze({ results: Object.freeze([]), total: 0 });

function lowerBound(sorted: readonly string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as string) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function sharedPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

interface Variant {
  readonly term: string;
  readonly weight: number;
}

/**
 * The query term itself, plus vocabulary terms it nearly prefixes or that
 * nearly prefix it ("financi"/"financ", "photo"/"photograph"): stemming misses
 * many derivations, and this catches them without a dictionary.
 */
function variants(data: IndexData, term: string, p: RankParams): Variant[] {
  const out: Variant[] = [{ term, weight: 1 }];
  if (p.prefixWeight <= 0 || term.length < p.minPrefix) return out;
  const head = term.slice(0, p.minPrefix);
  const vocab = data.vocabulary;
  for (let i = lowerBound(vocab, head); i < vocab.length; i++) {
    const v = vocab[i] as string;
    if (!v.startsWith(head)) break;
    if (v === term) continue;
    const shared = sharedPrefix(v, term);
    if (shared >= Math.min(v.length, term.length) - 1) out.push({ term: v, weight: p.prefixWeight });
  }
  return out;
}

function queryTerms(query: string): string[] {
  const seen = new Set<string>();
  for (const t of analyze(query)) {
    if (seen.size >= MAX_QUERY_TERMS) break;
    seen.add(t);
  }
  return [...seen];
}

/** One search's working state: the permitted view of the index and its accumulators. */
interface Pass {
  readonly data: IndexData;
  readonly params: RankParams;
  readonly mask: Uint8Array;
  readonly stats: Stats;
  /** BM25F constants under the allowed tools' averages; the unrestricted search reads precomputed values instead. */
  readonly norms: Norms | undefined;
  readonly scratch: Scratch;
}

/**
 * The allowed entries of one posting with their saturated term frequencies:
 * with every tool allowed the posting's own precomputed arrays, otherwise the
 * scratch slice filled in one pass that also counts the document frequency.
 */
function allowedEntries(pass: Pass, posting: Posting): Slice {
  const { data, mask, norms } = pass;
  if (norms === undefined)
    return { docs: posting.docs, sat: posting.full, bits: posting.bits, length: posting.docs.length };
  const slice = pass.scratch.slice;
  let n = 0;
  for (let i = 0; i < posting.docs.length; i++) {
    const d = posting.docs[i] as number;
    if (mask[d] !== 1) continue;
    slice.docs[n] = d;
    slice.sat[n] = saturatedTf(posting.tf, i * FIELD_COUNT, posting.bits[i] as number, data.lengths, d, norms);
    slice.bits[n] = posting.bits[i] as number;
    n++;
  }
  return { docs: slice.docs, sat: slice.sat, bits: slice.bits, length: n };
}

/**
 * Adds one query term to the scores: each document gets its best variant's
 * BM25F score times `weight`.
 */
function addTerm(pass: Pass, candidates: readonly Variant[], weight: number): void {
  const { data, stats, scratch } = pass;
  const { scores, fieldsHit, best, held, touched, hits } = scratch;
  // A single candidate adds straight to the scores; variants compete per document first.
  const direct = candidates.length === 1;
  for (const v of candidates) {
    const posting = data.postings.get(v.term);
    if (posting === undefined) continue;
    const e = allowedEntries(pass, posting);
    if (e.length === 0) continue;
    const scale = v.weight * weight * idf(stats.count, e.length);
    for (let i = 0; i < e.length; i++) {
      const d = e.docs[i] as number;
      if (held[d] === 1) continue;
      const s = scale * (e.sat[i] as number);
      if (s <= 0) continue;
      fieldsHit[d] = (fieldsHit[d] as number) | (e.bits[i] as number);
      if (direct) {
        if (scores[d] === 0) hits.ids[hits.length++] = d;
        scores[d] = (scores[d] as number) + s;
        continue;
      }
      if (best[d] === 0) touched.ids[touched.length++] = d;
      if (s > (best[d] as number)) best[d] = s;
    }
  }
  for (let i = 0; i < touched.length; i++) {
    const d = touched.ids[i] as number;
    if (scores[d] === 0) hits.ids[hits.length++] = d;
    scores[d] = (scores[d] as number) + (best[d] as number);
    best[d] = 0;
  }
  touched.length = 0;
}

export function searchIndex(
  data: IndexData,
  params: RankParams,
  query: string,
  limit: number,
  offset: number,
  allowed: Allowed | undefined,
): SearchResult {
  if (typeof query !== 'string' || data.names.length === 0) return EMPTY;
  const terms = queryTerms(query);
  if (terms.length === 0) return EMPTY;
  const scratch = scratchFor(data);
  scratch.busy = true;
  try {
    return permitted(data, params, query, terms, limit, offset, allowed, scratch);
  } catch {
    // Whatever failed may have left the accumulators dirty: the next search starts afresh.
    scratches.delete(data);
    return EMPTY;
  } finally {
    scratch.busy = false;
  }
}

function permitted(
  data: IndexData,
  params: RankParams,
  query: string,
  terms: readonly string[],
  limit: number,
  offset: number,
  allowed: Allowed | undefined,
  scratch: Scratch,
): SearchResult {
  if (allowed === undefined)
    return rank(
      { data, params, mask: data.everyone.mask, stats: data.everyone.stats, norms: undefined, scratch },
      query,
      terms,
      limit,
      offset,
    );
  const view = permit(data, allowed, scratch.permit);
  try {
    if (view.stats.count === 0) return EMPTY;
    const norms = normsFor(view.stats.avgLength, params);
    return rank({ data, params, mask: view.mask, stats: view.stats, norms, scratch }, query, terms, limit, offset);
  } finally {
    release(view);
  }
}

/**
 * Re-scores the first-pass leaders by their character n-gram cosine with the
 * request (`gram-score.ts`) and combines the two by CombSUM of max-normalised
 * scores: every hit keeps `(1 − w) · score / best score`, and a leader adds
 * `w · cosine / best cosine`. Tools past the leaders keep their order below
 * them.
 */
function gramRescore(pass: Pass, query: string): void {
  const { data, params, scratch } = pass;
  const { scores, hits } = scratch;
  if (data.grams === undefined || hits.length === 0) return;
  const leaders = topPage(hits, scores, 0, params.gramDepth);
  const best = scores[leaders[0] as number] as number;
  if (!(best > 0)) return;
  const audience = { mask: pass.norms === undefined ? undefined : pass.mask, count: pass.stats.count };
  const cosine = gramCosines(data.grams, query, leaders, audience, scratch.grams);
  if (cosine === undefined) return;
  let top = 0;
  for (let i = 0; i < cosine.length; i++) top = Math.max(top, cosine[i] as number);
  if (!(top > 0)) return;
  const w = params.gramWeight;
  for (let i = 0; i < hits.length; i++) {
    const d = hits.ids[i] as number;
    scores[d] = ((1 - w) * (scores[d] as number)) / best;
  }
  for (let i = 0; i < leaders.length; i++) {
    const d = leaders[i] as number;
    scores[d] = (scores[d] as number) + (w * (cosine[i] as number)) / top;
  }
}

function rank(pass: Pass, query: string, terms: readonly string[], limit: number, offset: number): SearchResult {
  const { data, params, scratch } = pass;
  const { scores, fieldsHit } = scratch;
  scratch.hits.length = 0;
  for (const term of terms) addTerm(pass, variants(data, term, params), 1);
  if (params.fbDocs > 0 && params.fbWeight > 0 && scratch.hits.length > 0) {
    const top = topPage(scratch.hits, scores, 0, params.fbDocs);
    const expansion = feedbackTerms(
      data,
      params,
      top,
      top.map((d) => scores[d] as number),
      new Set(terms),
      pass.mask,
      pass.stats,
    );
    const mass = params.fbWeight * terms.length;
    // The feedback tools already hold these terms; crediting them again would
    // only entrench the first-pass order, so expansion can lift others alone.
    for (const d of top) scratch.held[d] = 1;
    for (const e of expansion) addTerm(pass, [{ term: e.term, weight: 1 }], Math.min(1, mass * e.weight));
    for (const d of top) scratch.held[d] = 0;
  }
  gramRescore(pass, query);
  const hits = scratch.hits;
  const page = topPage(hits, scores, offset, limit);
  const result: SearchResult = {
    total: hits.length,
    results: page.map((d) => ({
      name: data.names[d] as string,
      score: scores[d] as number,
      matched: MATCHED[fieldsHit[d] as number] as readonly FieldName[],
    })),
  };
  for (let i = 0; i < hits.length; i++) {
    const d = hits.ids[i] as number;
    scores[d] = 0;
    fieldsHit[d] = 0;
  }
  hits.length = 0;
  return result;
}

/** The `matched` list of every field bit set, shared by all results. */
const MATCHED: readonly (readonly FieldName[])[] = Array.from({ length: 1 << FIELD_COUNT }, (_, bits) =>
  Object.freeze(FIELDS.filter((_field, f) => (bits & (1 << f)) !== 0)),
);

/**
 * Per-document accumulators, reused across searches of one index: a search
 * runs synchronously to completion and clears what it touched, and not
 * allocating them per query keeps garbage collection out of the tail latency.
 */
interface Scratch {
  readonly scores: Float64Array;
  readonly fieldsHit: Uint8Array;
  readonly best: Float64Array;
  /** Documents that a scoring pass leaves alone (the feedback tools). */
  readonly held: Uint8Array;
  /** Documents scored so far, and those the current term reached. */
  readonly hits: IdList;
  readonly touched: IdList;
  /** A restricted search's allowed entries of the posting at hand. */
  readonly slice: Slice;
  readonly permit: PermitBuffers;
  readonly grams: GramScratch;
  /** Set while a search runs on these accumulators. */
  busy: boolean;
}

/**
 * Document ids in a reused typed array: a JS array emptied by `length = 0`
 * drops its storage and regrows it on the next search, garbage that showed
 * up as collector pauses in the latency tail.
 */
interface IdList {
  readonly ids: Int32Array;
  length: number;
}

interface Slice {
  readonly docs: Int32Array;
  readonly sat: Float64Array;
  readonly bits: Uint8Array;
  readonly length: number;
}

const scratches = new WeakMap<IndexData, Scratch>();

/**
 * The index's reused accumulators, or fresh ones while they are in use: an
 * `allowed` predicate that itself searches the same index must not write
 * into the outer search's permit or scores.
 */
function scratchFor(data: IndexData): Scratch {
  const cached = scratches.get(data);
  if (cached !== undefined && !cached.busy) return cached;
  const n = data.names.length;
  const s: Scratch = {
    scores: new Float64Array(n),
    fieldsHit: new Uint8Array(n),
    best: new Float64Array(n),
    held: new Uint8Array(n),
    hits: { ids: new Int32Array(n), length: 0 },
    touched: { ids: new Int32Array(n), length: 0 },
    slice: { docs: new Int32Array(n), sat: new Float64Array(n), bits: new Uint8Array(n), length: 0 },
    permit: { mask: new Uint8Array(n), admitted: new Int32Array(n) },
    grams: gramScratch(data.grams),
    busy: false,
  };
  if (cached === undefined) scratches.set(data, s);
  return s;
}

/** Higher score first; equal scores by lower id, i.e. by tool name. */
function before(a: number, b: number, scores: Float64Array): boolean {
  const sa = scores[a] as number;
  const sb = scores[b] as number;
  return sa > sb || (sa === sb && a < b);
}

/** The requested page of the ranking without sorting every hit. */
function topPage(hits: IdList, scores: Float64Array, offset: number, limit: number): number[] {
  const want = offset + limit;
  if (limit <= 0 || want <= 0 || offset >= hits.length) return [];
  // Worst-first heap of the best `want` hits seen so far.
  const heap: number[] = [];
  const worse = (i: number, j: number): boolean => before(heap[j] as number, heap[i] as number, scores);
  const swap = (i: number, j: number): void => {
    const t = heap[i] as number;
    heap[i] = heap[j] as number;
    heap[j] = t;
  };
  const down = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let w = i;
      if (l < heap.length && worse(l, w)) w = l;
      if (r < heap.length && worse(r, w)) w = r;
      if (w === i) return;
      swap(i, w);
      i = w;
    }
  };
  // The worst kept score: most hits fall below it and are passed over in one comparison.
  let floor = -Infinity;
  for (let h = 0; h < hits.length; h++) {
    const d = hits.ids[h] as number;
    if ((scores[d] as number) < floor) continue;
    if (heap.length < want) {
      heap.push(d);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!worse(i, parent)) break;
        swap(i, parent);
        i = parent;
      }
      if (heap.length === want) floor = scores[heap[0] as number] as number;
    } else if (before(d, heap[0] as number, scores)) {
      heap[0] = d;
      down(0);
      floor = scores[heap[0]] as number;
    }
  }
  heap.sort((a, b) => (before(a, b, scores) ? -1 : 1));
  return heap.slice(offset, want);
}
