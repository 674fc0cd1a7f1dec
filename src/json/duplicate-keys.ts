import { foldName } from './fold-name.ts';
import { memberNameCount } from './scan.ts';

/**
 * Whether any object in a JSON text names a member twice. JSON leaves the
 * meaning of a repeated name open and parsers differ: JSON.parse keeps the
 * last, others keep the first or fail. toolgate decides on the message it
 * parsed (method, tool name, arguments against their schema), so a body the
 * server could read differently (`"method":"ping","method":"tools/call"`, or
 * a path argument given twice) must not pass. Names compare as decoded, so
 * `"a"` and `"\u0061"` are the same name, and folded as Go servers match
 * them to fields (fold-name.ts), so `"name"` and `"Name"` are too.
 *
 * `text` must already be valid JSON (JSON.parse accepted it), and `value`
 * what JSON.parse made of it. A parsed object keeps one member per decoded
 * name, so the text repeats a name exactly when it holds more member names
 * than the parsed value holds members: one count over the text, without
 * decoding a name, and one over the value. Two members fold alike only if
 * one of them is not its own fold, so only those names are compared.
 */
export function hasDuplicateKeys(text: string, value: unknown = JSON.parse(text)): boolean {
  if (typeof value !== 'object' || value === null) return false;
  let members = 0;
  const pending: object[] = [value];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (Array.isArray(next)) {
      for (const item of next) if (typeof item === 'object' && item !== null) pending.push(item);
      continue;
    }
    let count = 0;
    // Folds of the names that fold to another spelling; a name that folds to itself
    // can only meet its fold twin through one of these.
    let refolded: string[] | undefined;
    for (const key in next) {
      count++;
      const folded = foldName(key);
      if (folded !== key) (refolded ??= []).push(folded);
      const item = (next as Record<string, unknown>)[key];
      if (typeof item === 'object' && item !== null) pending.push(item);
    }
    if (refolded !== undefined && foldsTogether(next, refolded)) return true;
    members += count;
  }
  return memberNameCount(text) !== members;
}

/** Whether one of `refolded` (folds of names that are not their own fold) is another member's name or fold. */
function foldsTogether(object: object, refolded: readonly string[]): boolean {
  for (const folded of refolded) if (Object.hasOwn(object, folded)) return true;
  if (refolded.length < 2) return false;
  return new Set(refolded).size !== refolded.length;
}
