/**
 * The Porter (1980) English stemmer, written for discovery so that "searching",
 * "searches" and "searched" meet "search". Input must be a lower-case word;
 * anything that is not plain a–z (digits, other scripts) is returned unchanged,
 * because the rules only make sense for English spelling.
 */

const PLAIN = /^[a-z]+$/;

function isConsonant(w: string, i: number): boolean {
  const c = w.charCodeAt(i);
  // a e i o u
  if (c === 97 || c === 101 || c === 105 || c === 111 || c === 117) return false;
  // 'y' after a consonant sounds like a vowel ("happy"), at the start like a consonant ("yes").
  if (c === 121) return i === 0 || !isConsonant(w, i - 1);
  return true;
}

/** Number of vowel–consonant sequences in w[0, end): Porter's m. */
function measure(w: string, end: number): number {
  let m = 0;
  let i = 0;
  while (i < end && isConsonant(w, i)) i++;
  while (i < end) {
    while (i < end && !isConsonant(w, i)) i++;
    if (i >= end) break;
    while (i < end && isConsonant(w, i)) i++;
    m++;
  }
  return m;
}

function hasVowel(w: string, end: number): boolean {
  for (let i = 0; i < end; i++) if (!isConsonant(w, i)) return true;
  return false;
}

function endsDoubleConsonant(w: string, end: number): boolean {
  return end >= 2 && w[end - 1] === w[end - 2] && isConsonant(w, end - 1);
}

/** Consonant–vowel–consonant ending where the last is not w, x or y ("hop", not "snow"). */
function endsCvc(w: string, end: number): boolean {
  if (end < 3) return false;
  if (!isConsonant(w, end - 3) || isConsonant(w, end - 2) || !isConsonant(w, end - 1)) return false;
  const last = w[end - 1];
  return last !== 'w' && last !== 'x' && last !== 'y';
}

type Rule = readonly [suffix: string, replacement: string];

function sortedRules(rules: readonly Rule[]): readonly Rule[] {
  return [...rules].sort((a, b) => b[0].length - a[0].length);
}

const STEP2 = sortedRules([
  ['ational', 'ate'],
  ['tional', 'tion'],
  ['enci', 'ence'],
  ['anci', 'ance'],
  ['izer', 'ize'],
  ['bli', 'ble'],
  ['alli', 'al'],
  ['entli', 'ent'],
  ['eli', 'e'],
  ['ousli', 'ous'],
  ['ization', 'ize'],
  ['ation', 'ate'],
  ['ator', 'ate'],
  ['alism', 'al'],
  ['iveness', 'ive'],
  ['fulness', 'ful'],
  ['ousness', 'ous'],
  ['aliti', 'al'],
  ['iviti', 'ive'],
  ['biliti', 'ble'],
  ['logi', 'log'],
]);

const STEP3 = sortedRules([
  ['icate', 'ic'],
  ['ative', ''],
  ['alize', 'al'],
  ['iciti', 'ic'],
  ['ical', 'ic'],
  ['ful', ''],
  ['ness', ''],
]);

const STEP4 = sortedRules([
  ['al', ''],
  ['ance', ''],
  ['ence', ''],
  ['er', ''],
  ['ic', ''],
  ['able', ''],
  ['ible', ''],
  ['ant', ''],
  ['ement', ''],
  ['ment', ''],
  ['ent', ''],
  ['ion', ''],
  ['ou', ''],
  ['ism', ''],
  ['ate', ''],
  ['iti', ''],
  ['ous', ''],
  ['ive', ''],
  ['ize', ''],
]);

/** Only the longest matching suffix is considered; when its condition fails the word stays. */
function applyRules(w: string, rules: readonly Rule[], minMeasure: number): string {
  for (const [suffix, replacement] of rules) {
    if (!w.endsWith(suffix)) continue;
    const stemEnd = w.length - suffix.length;
    if (measure(w, stemEnd) <= minMeasure) return w;
    if (suffix === 'ion') {
      const before = w[stemEnd - 1];
      if (before !== 's' && before !== 't') return w;
    }
    return w.slice(0, stemEnd) + replacement;
  }
  return w;
}

function step1a(w: string): string {
  if (w.endsWith('sses')) return w.slice(0, -2);
  if (w.endsWith('ies')) return w.slice(0, -2);
  if (w.endsWith('ss')) return w;
  if (w.endsWith('s')) return w.slice(0, -1);
  return w;
}

function step1b(w: string): string {
  if (w.endsWith('eed')) return measure(w, w.length - 3) > 0 ? w.slice(0, -1) : w;
  let root: string;
  if (w.endsWith('ed') && hasVowel(w, w.length - 2)) root = w.slice(0, -2);
  else if (w.endsWith('ing') && hasVowel(w, w.length - 3)) root = w.slice(0, -3);
  else return w;
  if (root.endsWith('at') || root.endsWith('bl') || root.endsWith('iz')) return root + 'e';
  if (endsDoubleConsonant(root, root.length)) {
    const last = root[root.length - 1];
    return last === 'l' || last === 's' || last === 'z' ? root : root.slice(0, -1);
  }
  if (measure(root, root.length) === 1 && endsCvc(root, root.length)) return root + 'e';
  return root;
}

function step1c(w: string): string {
  return w.endsWith('y') && hasVowel(w, w.length - 1) ? w.slice(0, -1) + 'i' : w;
}

function step5(w: string): string {
  if (w.endsWith('e')) {
    const m = measure(w, w.length - 1);
    if (m > 1 || (m === 1 && !endsCvc(w, w.length - 1))) w = w.slice(0, -1);
  }
  if (w.endsWith('ll') && measure(w, w.length) > 1) w = w.slice(0, -1);
  return w;
}

export function stem(word: string): string {
  if (word.length <= 2 || !PLAIN.test(word)) return word;
  let w = step1a(word);
  w = step1b(w);
  w = step1c(w);
  w = applyRules(w, STEP2, 0);
  w = applyRules(w, STEP3, 0);
  w = applyRules(w, STEP4, 1);
  return step5(w);
}
