import { contentWords } from '../text/analyze.ts';

/**
 * Character 4-grams of each tool: a second view of its text for re-scoring
 * the first-pass leaders (`gram-score.ts`). Each word (function words
 * dropped, not stemmed) padded with a space either side yields its
 * overlapping 4-grams, so "superchargers" meets "charge", "currencies" meets
 * "currency" and a glued name ("GameTool") meets its words, without the
 * stemmer's all-or-nothing. Four letters matched the other sets best; three
 * gave MetaTool as much but cost LiveMCPBench, five lost on both.
 */
const GRAM_SIZE = 4;

/**
 * Everything here is fixed by the catalogue, whoever searches: which grams a
 * tool holds, and which tools hold a gram. Corpus statistics are taken at
 * search time over the allowed tools. Arrays are flat (compressed rows) so a
 * 10,000-tool build allocates a handful of buffers, not one per tool or gram.
 */
export interface GramIndex {
  readonly ids: GramIds;
  /**
   * Tool d's distinct grams are `grams[toolStart[d] .. toolStart[d + 1])`, in
   * order of first occurrence in its text, so the sums taken over them run in
   * the same order in any index holding that tool; `tf` holds each one's
   * 1 + ln(field-weighted count).
   */
  readonly toolStart: Int32Array;
  readonly grams: Int32Array;
  readonly tf: Float32Array;
  /** Gram g is held by the tools `holders[holderStart[g] .. holderStart[g + 1])`, ascending. */
  readonly holderStart: Int32Array;
  readonly holders: Int32Array;
}

/** Seven bits per ASCII code unit: a gram of four is a 28-bit integer, no string needed. */
const ASCII_BITS = 7;
const KEY_MASK = (1 << (ASCII_BITS * GRAM_SIZE)) - 1;
const SPACE = 32;

/**
 * Calls `visit` with each 4-gram of a word padded by a space either side:
 * as an integer key when all four code units are ASCII (`text` undefined),
 * otherwise as its text (`key` −1). Rolling the key along the word avoids a
 * string per gram in ASCII catalogues.
 */
export function eachGram(word: string, visit: (key: number, text: string | undefined) => void): void {
  const padded = word.length + 2;
  let key = 0;
  let lastWide = -1;
  for (let j = 0; j < padded; j++) {
    const c = j === 0 || j === padded - 1 ? SPACE : word.charCodeAt(j - 1);
    if (c >= 1 << ASCII_BITS) lastWide = j;
    key = ((key << ASCII_BITS) | (c & ((1 << ASCII_BITS) - 1))) & KEY_MASK;
    const start = j - GRAM_SIZE + 1;
    if (start < 0) continue;
    if (lastWide >= start) visit(-1, ` ${word} `.slice(start, start + GRAM_SIZE));
    else visit(key, undefined);
  }
}

/** Gram ids by key: ASCII grams by their integer, the rest by text. */
export class GramIds {
  private readonly ascii = new Map<number, number>();
  private readonly wide = new Map<string, number>();
  size = 0;

  get(key: number, text: string | undefined): number | undefined {
    return text === undefined ? this.ascii.get(key) : this.wide.get(text);
  }

  /** Gives a key not yet held the next id. */
  add(key: number, text: string | undefined): number {
    if (text === undefined) this.ascii.set(key, this.size);
    else this.wide.set(text, this.size);
    return this.size++;
  }
}

/** Calls `visit` for each gram of a text's content words; a request is read as a tool's text is. */
export function eachTextGram(text: string, visit: (key: number, text: string | undefined) => void): void {
  for (const word of contentWords(text)) eachGram(word, visit);
}

/** Typed-array storage that doubles as it fills; `view()` trims to the filled part. */
class Grow<T extends Int32Array | Float32Array> {
  length = 0;
  private data: T;
  private readonly make: (n: number) => T;
  constructor(data: T, make: (n: number) => T) {
    this.data = data;
    this.make = make;
  }
  push(x: number): void {
    if (this.length === this.data.length) {
      const next = this.make(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = x;
  }
  get(i: number): number {
    return this.data[i] as number;
  }
  set(i: number, x: number): void {
    this.data[i] = x;
  }
  view(): T {
    return this.data.subarray(0, this.length) as T;
  }
}

const int32 = (n: number): Int32Array => new Int32Array(n);
const float32 = (n: number): Float32Array => new Float32Array(n);

/**
 * Builds a GramIndex from each tool's words as the word index reads them
 * (`fieldTerms` sink), tool after tool in id order. A word counts its field's
 * BM25F weight, so a name gram weighs as much as a name word.
 */
export class GramBuilder {
  private readonly ids = new GramIds();
  private readonly weights: readonly number[];
  private readonly toolStart: Grow<Int32Array>;
  private readonly grams = new Grow(new Int32Array(1 << 16), int32);
  private readonly tf = new Grow(new Float32Array(1 << 16), float32);
  private readonly holderCount = new Grow(new Int32Array(1 << 12), int32);
  /** The current tool's weighted count per gram id; zero again after each tool. */
  private count = new Float64Array(1 << 12);

  constructor(weights: readonly number[]) {
    this.weights = weights;
    this.toolStart = new Grow(new Int32Array(1 << 10), int32);
    this.toolStart.push(0);
  }

  /**
   * Each distinct word's gram ids, for this build only: catalogues repeat a
   * small vocabulary (10,000 synthetic tools: 420,000 words, 1.5 million
   * grams), so most words cost one lookup instead of one per gram.
   */
  private readonly wordGrams = new Map<string, Int32Array>();
  private readonly pending: number[] = [];
  private readonly collect = (key: number, text: string | undefined): void => {
    let id = this.ids.get(key, text);
    if (id === undefined) {
      id = this.ids.add(key, text);
      this.holderCount.push(0);
      if (id >= this.count.length) {
        const next = new Float64Array(this.count.length * 2);
        next.set(this.count);
        this.count = next;
      }
    }
    this.pending.push(id);
  };

  private gramsOf(word: string): Int32Array {
    let ids = this.wordGrams.get(word);
    if (ids === undefined) {
      this.pending.length = 0;
      eachGram(word, this.collect);
      this.wordGrams.set(word, (ids = Int32Array.from(this.pending)));
    }
    return ids;
  }

  /** A WordSink: one text's content words in the current tool's field. */
  readonly words = (field: number, words: readonly string[]): void => {
    const weight = this.weights[field] as number;
    if (!(weight > 0)) return;
    for (const word of words) {
      const ids = this.gramsOf(word);
      const count = this.count;
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i] as number;
        if (count[id] === 0) this.grams.push(id);
        count[id] = (count[id] as number) + weight;
      }
    }
  };

  endTool(): void {
    const { grams, count } = this;
    for (let i = this.toolStart.get(this.toolStart.length - 1); i < grams.length; i++) {
      const id = grams.get(i);
      this.tf.push(1 + Math.log(count[id] as number));
      count[id] = 0;
      this.holderCount.set(id, this.holderCount.get(id) + 1);
    }
    this.toolStart.push(grams.length);
  }

  finish(): GramIndex {
    const toolStart = this.toolStart.view().slice();
    const grams = this.grams.view().slice();
    const gramCount = this.holderCount.length;
    const holderStart = new Int32Array(gramCount + 1);
    for (let g = 0; g < gramCount; g++) holderStart[g + 1] = (holderStart[g] as number) + this.holderCount.get(g);
    // Tools were added in id order, so each gram's holders come out ascending.
    const fill = holderStart.slice(0, gramCount);
    const holders = new Int32Array(grams.length);
    for (let d = 0; d + 1 < toolStart.length; d++) {
      for (let i = toolStart[d] as number; i < (toolStart[d + 1] as number); i++) {
        const g = grams[i] as number;
        holders[fill[g] as number] = d;
        fill[g] = (fill[g] as number) + 1;
      }
    }
    return { ids: this.ids, toolStart, grams, tf: this.tf.view().slice(), holderStart, holders };
  }
}
