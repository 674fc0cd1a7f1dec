import { stem } from './stem.ts';
import { tokenize } from './tokenize.ts';

/**
 * Function words carry no signal about which tool is meant, and in long
 * natural-language requests they would otherwise dominate the term list.
 */
const STOP_WORDS: ReadonlySet<string> = new Set([
  'a',
  'about',
  'after',
  'all',
  'also',
  'am',
  'an',
  'and',
  'any',
  'are',
  'as',
  'at',
  'be',
  'been',
  'being',
  'both',
  'but',
  'by',
  'can',
  'could',
  'did',
  'do',
  'does',
  'doing',
  'each',
  'for',
  'from',
  'had',
  'has',
  'have',
  'having',
  'he',
  'her',
  'here',
  'hers',
  'him',
  'his',
  'how',
  'i',
  'if',
  'in',
  'into',
  'is',
  'it',
  'its',
  'itself',
  'just',
  'me',
  'might',
  'more',
  'most',
  'my',
  'myself',
  'no',
  'nor',
  'not',
  'of',
  'on',
  'once',
  'only',
  'or',
  'other',
  'our',
  'ours',
  'out',
  'over',
  'own',
  'please',
  'same',
  'she',
  'should',
  'so',
  'some',
  'such',
  'than',
  'that',
  'the',
  'their',
  'theirs',
  'them',
  'then',
  'there',
  'these',
  'they',
  'this',
  'those',
  'through',
  'to',
  'too',
  'under',
  'until',
  'up',
  'very',
  'was',
  'we',
  'were',
  'what',
  'when',
  'where',
  'which',
  'while',
  'who',
  'whom',
  'why',
  'will',
  'with',
  'would',
  'you',
  'your',
  'yours',
  'yourself',
  's',
  't',
  'd',
  'll',
  're',
  've',
  'm',
]);

/** Catalogues repeat a small vocabulary; remembering stems makes index builds several times faster. */
const STEM_MEMO_LIMIT = 50_000;
const stemMemo = new Map<string, string>();

export function stemCached(word: string): string {
  let s = stemMemo.get(word);
  if (s === undefined) {
    s = stem(word);
    if (stemMemo.size >= STEM_MEMO_LIMIT) stemMemo.clear();
    stemMemo.set(word, s);
  }
  return s;
}

/** A text's tokens in order without function words: what is stemmed, and what character n-grams are cut from. */
export function contentWords(text: string): string[] {
  const out: string[] = [];
  for (const t of tokenize(text)) if (!STOP_WORDS.has(t)) out.push(t);
  return out;
}

/** Index terms of a text, in order: tokens without function words, stemmed. */
export function analyze(text: string): string[] {
  return stems(contentWords(text));
}

export function stems(words: readonly string[]): string[] {
  return words.map(stemCached);
}
