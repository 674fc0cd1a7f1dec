import { foldName } from './fold-name.ts';
import { stringEnd, stringValue } from './scan.ts';

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
 * `text` must already be valid JSON (JSON.parse accepted it): the scan only
 * tracks strings and nesting, in one pass, and never throws.
 */
export function hasDuplicateKeys(text: string): boolean {
  // One entry per open container: the names seen so far for an object, null for an array.
  const open: (Set<string> | null)[] = [];
  let expectName = false;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      if (expectName) {
        const name = foldName(stringValue(text, i, end));
        const names = open[open.length - 1] as Set<string>;
        if (names.has(name)) return true;
        names.add(name);
        expectName = false;
      }
      i = end;
      continue;
    }
    if (c === 0x7b) {
      open.push(new Set());
      expectName = true;
    } else if (c === 0x5b) {
      open.push(null);
    } else if (c === 0x7d || c === 0x5d) {
      open.pop();
    } else if (c === 0x2c) {
      expectName = open[open.length - 1] !== null;
    }
    i++;
  }
  return false;
}
