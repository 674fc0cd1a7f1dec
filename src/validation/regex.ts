import { RE2JS } from 're2js';
import { backtracksLinearly } from './backtrack-safe.ts';
import { translatePattern } from './regex-translate.ts';

/**
 * The pattern engine handed to ajv. Every `pattern` and `patternProperties`
 * key runs in time linear in the input, so no schema can make a call block
 * the event loop however its patterns are written: on RE2 (re2js), linear by
 * construction, or, for the shapes whose backtracking is provably linear
 * (backtrack-safe.ts), on V8's own engine, which answers the same question
 * several times faster.
 */

export const MAX_PATTERN_LENGTH = 512;

export type PatternCheck =
  | { readonly ok: true; readonly re2: RE2JS }
  | { readonly ok: false; readonly reason: 'invalid_pattern' | 'pattern_too_long' };

export function compilePattern(pattern: string): PatternCheck {
  if (pattern.length > MAX_PATTERN_LENGTH) return { ok: false, reason: 'pattern_too_long' };
  const translated = translatePattern(pattern);
  if (!translated.ok) return { ok: false, reason: 'invalid_pattern' };
  try {
    return { ok: true, re2: booleanOnDfa(RE2JS.compile(translated.source)) };
  } catch {
    return { ok: false, reason: 'invalid_pattern' };
  }
}

/**
 * re2js answers a boolean `test` of an anchored pattern with its one-pass
 * engine, which walks the program rune by rune: ~950 ns for the bench's
 * `^[a-z0-9-]+/[a-z0-9-]+$` on a 21-character string, against ~270 ns on its
 * DFA. RE2 itself keeps one-pass for extracting submatches and answers a
 * yes/no on the DFA, which is just as linear; toolgate asks only yes/no, so it
 * takes the one-pass program away. The DFA still gives up past its memory
 * budget to the bounded backtracker or the NFA, linear either way.
 * `regex.test.ts` fails if a re2js upgrade moves the field.
 */
function booleanOnDfa(re: RE2JS): RE2JS {
  const program = re.re2() as { onepass?: unknown };
  if (program.onepass !== undefined) program.onepass = null;
  return re;
}

interface LinearRegExp {
  test(s: string): boolean;
  toString(): string;
}

/**
 * ajv keys compiled patterns by `toString()`, so each wrapper must print its
 * own source. Patterns reaching here were already accepted by the schema walk;
 * one that is not throws, which fails the compilation closed. The flags ajv
 * passes are always `u`, whose semantics the translation implements.
 */
function linearRegExp(pattern: string, _flags: string): LinearRegExp {
  const checked = compilePattern(pattern);
  if (!checked.ok) throw new Error('pattern refused');
  if (backtracksLinearly(pattern)) {
    const native = new RegExp(pattern, 'u');
    return { test: (s: string) => native.test(s), toString: () => `native:${pattern}` };
  }
  const re2 = checked.re2;
  return {
    test: (s: string) => re2.test(s),
    toString: () => `re2:${pattern}`,
  };
}

export const linearRegExpEngine = Object.assign(linearRegExp, { code: 'linearRegExp' });
