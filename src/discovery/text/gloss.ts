/**
 * English glosses for Chinese text, so that an English request meets a tool
 * described in Chinese, as many MCP servers' tools are: dictionary-based
 * cross-language matching. The dictionary is CC-CEDICT (CC BY-SA 4.0), read
 * locally from the copy the `chinese-tokenizer` package ships; each Han run is
 * segmented by forward maximum matching and each word contributes its first
 * senses, which the dictionary lists first.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** Dictionary words (simplified or traditional) and their glosses, for the texts at hand. */
export type Glossary = ReadonlyMap<string, string>;

const HAN_RUN = /\p{Script=Han}+/gu;
const HAN = /\p{Script=Han}/u;
/** Longest word tried; longer dictionary entries are idioms and proper names. */
const MAX_WORD = 8;
/** Senses kept per word: the main meanings; later ones are rarer uses. */
const SENSES = 3;
/** Senses that point elsewhere or name a classifier say nothing about the word's meaning. */
const REFERENCE = /^(CL:|variant|old variant|surname|see |used in|abbr)/;
const NOTES = /\([^)]*\)/g;
const PINYIN = /\[[^\]]*\]/g;
// oxlint-disable-next-line no-control-regex -- the class is everything outside ASCII, NUL included by design
const NON_ASCII = /[^\x00-\x7f]+/g;

const EMPTY: Glossary = new Map();

function hanRuns(text: string): string[][] {
  // One search settles most texts, which hold no Chinese at all.
  if (!HAN.test(text)) return [];
  return Array.from(text.matchAll(HAN_RUN), (m) => Array.from(m[0]));
}

/** The dictionary's text, or undefined when the package is not installed: glossing is then skipped. */
function dictionary(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    return readFileSync(require.resolve('chinese-tokenizer/tests/cedict_ts.u8'), 'utf8');
  } catch {
    return undefined;
  }
}

/** "TRAD SIMP [pin1 yin1] /sense/sense/" → the kept senses as plain English, or undefined. */
function senses(line: string): string | undefined {
  const open = line.indexOf('/');
  if (open < 0) return undefined;
  const kept = line
    .slice(open + 1)
    .split('/')
    .filter((s) => s.trim() !== '' && !REFERENCE.test(s))
    .slice(0, SENSES)
    .map((s) => s.replace(NOTES, ' ').replace(PINYIN, ' ').replace(NON_ASCII, ' '));
  return kept.length > 0 ? kept.join(' ') : undefined;
}

/**
 * The dictionary entries that occur in the given texts: reading only those
 * keeps memory to the catalogue's own words. Every entry inside a text is
 * kept, so a text's glosses are the ones the whole dictionary would give,
 * whichever other texts came along: one tool's glosses never depend on
 * another tool.
 */
export function glossaryFor(texts: Iterable<string>): Glossary {
  const wanted = new Set<string>();
  for (const text of texts) {
    for (const chars of hanRuns(text)) {
      for (let i = 0; i < chars.length; i++) {
        let word = '';
        for (let l = 0; l < MAX_WORD && i + l < chars.length; l++) {
          word += chars[i + l] as string;
          wanted.add(word);
        }
      }
    }
  }
  if (wanted.size === 0) return EMPTY;
  const dict = dictionary();
  if (dict === undefined) return EMPTY;
  const heads = new Set<number>();
  for (const w of wanted) heads.add(w.charCodeAt(0));
  const out = new Map<string, string>();
  for (let start = 0; start < dict.length;) {
    let end = dict.indexOf('\n', start);
    if (end < 0) end = dict.length;
    const a = dict.indexOf(' ', start);
    const b = a < 0 ? -1 : dict.indexOf(' ', a + 1);
    // A line is read further only when a word of it starts as a wanted one does: most lines are of no interest.
    if (b >= 0 && b < end && (heads.has(dict.charCodeAt(a + 1)) || heads.has(dict.charCodeAt(start)))) {
      const want = [dict.slice(a + 1, b), dict.slice(start, a)].filter((w) => wanted.has(w) && !out.has(w));
      const g = want.length > 0 ? senses(dict.slice(start, end)) : undefined;
      if (g !== undefined) for (const w of want) out.set(w, g);
    }
    start = end + 1;
  }
  return out;
}

/** The English glosses of a text's Chinese words, longest dictionary match first. */
export function gloss(text: string, glossary: Glossary): string {
  if (glossary.size === 0) return '';
  const out: string[] = [];
  for (const chars of hanRuns(text)) {
    let i = 0;
    while (i < chars.length) {
      let step = 1;
      for (let l = Math.min(MAX_WORD, chars.length - i); l >= 1; l--) {
        const g = glossary.get(chars.slice(i, i + l).join(''));
        if (g === undefined) continue;
        out.push(g);
        step = l;
        break;
      }
      i += step;
    }
  }
  return out.join(' ');
}
