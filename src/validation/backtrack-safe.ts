import { complement, isSyntaxCharacter, LINE_TERMINATORS, WHITESPACE } from './regex-translate.ts';

/**
 * Whether V8's own (backtracking) engine runs a pattern in time linear in the
 * input, so it may answer in place of RE2: the engine is several times
 * cheaper per call, and only a yes/no is asked. Most schema patterns qualify
 * (`^[a-z0-9-]+/[a-z0-9-]+$`, `^\d{4}-\d{2}-\d{2}$`); anything else stays on
 * RE2, so a wrong "no" costs time and a wrong "yes" a blocked event loop.
 * The shapes accepted are kept few enough to argue about:
 *
 * - Anchored with `^` at the start: V8 tries only the first position.
 *   Unanchored, `[a-z]+x` costs the square of the input's length.
 * - Then a sequence of single-character items (a literal, `.`, an escape such
 *   as `\d` or `\s`, a class), each optionally quantified greedily, and an
 *   optional `$` at the end. No groups, alternation, lookaround,
 *   back-references, word boundaries or `\p{…}`.
 * - Each item that may repeat a variable number of times shares no character
 *   with anything that may come right after it: the items that follow, up to
 *   and including the first that must match at least once.
 *
 * Under the last rule a character given back by a repetition can never be
 * matched by what follows, so every backtrack fails at once: each input
 * character is consumed once and given back at most once, and each give-back
 * re-tries at most the items after it. The work is bounded by the input's
 * length times the number of items, which MAX_ITEMS keeps small.
 *
 * Sets are exact: an approximation of a set is an under-approximation of its
 * complement, and a negated class would then pass unsoundly.
 */
export function backtracksLinearly(pattern: string): boolean {
  const items = parseItems(pattern);
  if (items === undefined || items.length > MAX_ITEMS) return false;
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as Item;
    if (item.min === item.max) continue;
    for (let j = i + 1; j < items.length; j++) {
      const next = items[j] as Item;
      if (overlap(item.set, next.set)) return false;
      if (next.min >= 1) break;
    }
  }
  return true;
}

/** Keeps the per-character cost of a give-back, and so the whole bound, small. */
const MAX_ITEMS = 24;

type Ranges = readonly (readonly [number, number])[];

interface Item {
  readonly set: Ranges;
  readonly min: number;
  readonly max: number;
}

const DIGITS: Ranges = [[0x30, 0x39]];
// Without the `i` flag, `\w` is ASCII only even under `u`.
const WORD: Ranges = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const SPACE: Ranges = normalise([...WHITESPACE, ...LINE_TERMINATORS]);

/** The pattern's items after `^`, or undefined for any shape outside those listed above. */
function parseItems(pattern: string): Item[] | undefined {
  try {
    // oxlint-disable-next-line no-new -- compiling the pattern is the check
    new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
  if (pattern[0] !== '^') return undefined;
  const reader = new Reader(pattern, 1);
  const items: Item[] = [];
  while (!reader.done()) {
    if (reader.peek() === '$') {
      reader.skip();
      return reader.done() ? items : undefined;
    }
    const set = reader.atom();
    if (set === undefined) return undefined;
    const quantity = reader.quantifier();
    if (quantity === undefined) return undefined;
    items.push({ set, min: quantity[0], max: quantity[1] });
  }
  return items;
}

class Reader {
  readonly #src: string;
  #i: number;

  constructor(src: string, start: number) {
    this.#src = src;
    this.#i = start;
  }

  done(): boolean {
    return this.#i >= this.#src.length;
  }

  peek(): string {
    return this.#src[this.#i] ?? '';
  }

  skip(): void {
    this.#i += 1;
  }

  /** One single-character item's set, or undefined for anything else. */
  atom(): Ranges | undefined {
    const c = this.peek();
    if (c === '\\') {
      this.skip();
      return this.#escape(false);
    }
    if (c === '[') return this.#characterClass();
    if (c === '.') {
      this.skip();
      return complement(LINE_TERMINATORS);
    }
    if (c !== '/' && isSyntaxCharacter(c)) return undefined;
    const cp = this.#codePoint();
    return cp === undefined ? undefined : [[cp, cp]];
  }

  /** [min, max] of a greedy quantifier (none is [1, 1]); undefined for a lazy one. */
  quantifier(): readonly [number, number] | undefined {
    const c = this.peek();
    let quantity: readonly [number, number];
    if (c === '*') quantity = [0, Infinity];
    else if (c === '+') quantity = [1, Infinity];
    else if (c === '?') quantity = [0, 1];
    else if (c === '{') {
      const close = this.#src.indexOf('}', this.#i);
      const m = /^\{(\d+)(,(\d*))?\}$/.exec(this.#src.slice(this.#i, close + 1));
      if (close < 0 || m === null) return undefined;
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      quantity = [min, max];
      this.#i = close;
    } else return [1, 1];
    this.skip();
    if (this.peek() === '?') return undefined;
    return quantity;
  }

  #codePoint(): number | undefined {
    const cp = this.#src.codePointAt(this.#i);
    if (cp === undefined || (cp >= 0xd800 && cp <= 0xdfff)) return undefined;
    this.#i += cp > 0xffff ? 2 : 1;
    return cp;
  }

  #escape(inClass: boolean): Ranges | undefined {
    const c = this.peek();
    this.skip();
    switch (c) {
      case 'd':
        return DIGITS;
      case 'D':
        return complement(DIGITS);
      case 'w':
        return WORD;
      case 'W':
        return complement(WORD);
      case 's':
        return SPACE;
      case 'S':
        return complement(SPACE);
      case 't':
        return [[0x09, 0x09]];
      case 'n':
        return [[0x0a, 0x0a]];
      case 'v':
        return [[0x0b, 0x0b]];
      case 'f':
        return [[0x0c, 0x0c]];
      case 'r':
        return [[0x0d, 0x0d]];
      case 'b':
        return inClass ? [[0x08, 0x08]] : undefined;
      case 'x':
      case 'u': {
        const m = (c === 'x' ? /^[0-9A-Fa-f]{2}/ : /^[0-9A-Fa-f]{4}/).exec(this.#src.slice(this.#i));
        if (m === null) return undefined;
        const cp = parseInt(m[0], 16);
        // Surrogate escapes may pair up into one code point: left to RE2.
        if (cp >= 0xd800 && cp <= 0xdfff) return undefined;
        this.#i += m[0].length;
        return [[cp, cp]];
      }
      default:
        if (isSyntaxCharacter(c) || (inClass && c === '-')) {
          const cp = c.charCodeAt(0);
          return [[cp, cp]];
        }
        return undefined;
    }
  }

  #characterClass(): Ranges | undefined {
    this.skip();
    let negated = false;
    if (this.peek() === '^') {
      negated = true;
      this.skip();
    }
    const ranges: (readonly [number, number])[] = [];
    let pendingLow: number | undefined;
    while (this.peek() !== ']') {
      if (this.done()) return undefined;
      let single: Ranges | undefined;
      if (this.peek() === '\\') {
        this.skip();
        single = this.#escape(true);
      } else {
        const cp = this.#codePoint();
        single = cp === undefined ? undefined : [[cp, cp]];
      }
      if (single === undefined) return undefined;
      const one = single.length === 1 && single[0]?.[0] === single[0]?.[1] ? single[0]?.[0] : undefined;
      if (pendingLow !== undefined) {
        // The host engine refused a range between a set and a character already.
        if (one === undefined) return undefined;
        ranges.push([pendingLow, one]);
        pendingLow = undefined;
      } else if (one !== undefined && this.peek() === '-' && this.#src[this.#i + 1] !== ']') {
        this.skip();
        pendingLow = one;
      } else {
        ranges.push(...single);
      }
    }
    this.skip();
    const set = normalise(ranges);
    return negated ? complement(set) : set;
  }
}

/** Sorted, merged ranges. */
function normalise(ranges: Ranges): Ranges {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function overlap(a: Ranges, b: Ranges): boolean {
  for (const [alo, ahi] of a) for (const [blo, bhi] of b) if (alo <= bhi && blo <= ahi) return true;
  return false;
}
