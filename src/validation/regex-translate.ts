/**
 * Translates an ECMAScript (`u` flag) regular expression into RE2 syntax with
 * the same meaning, or refuses it. JSON Schema patterns are ECMA-262, and RE2
 * differs in places that matter: `.` (RE2 excludes only `\n`), `\s` (RE2 is
 * ASCII-only), escapes (`\u`, `\c`), empty classes and property names. The
 * input is first checked by the host engine, so only valid ECMAScript reaches
 * the translator; anything it does not understand exactly is refused, never
 * approximated. Every literal is emitted as `\x{…}` so no RE2 metacharacter
 * can change meaning.
 */

export type Translation = { readonly ok: true; readonly source: string } | { readonly ok: false };

const MAX_CODE_POINT = 0x10ffff;

/** ECMAScript WhiteSpace and LineTerminator, which is what `\s` means there. */
export const WHITESPACE: readonly (readonly [number, number])[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];

/** What `.` excludes without the `s` flag. */
export const LINE_TERMINATORS: readonly (readonly [number, number])[] = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];

/** ECMAScript General_Category long names → the short names RE2 knows. */
const CATEGORY_ALIASES: ReadonlyMap<string, string> = new Map([
  ['Letter', 'L'],
  ['Uppercase_Letter', 'Lu'],
  ['Lowercase_Letter', 'Ll'],
  ['Titlecase_Letter', 'Lt'],
  ['Modifier_Letter', 'Lm'],
  ['Other_Letter', 'Lo'],
  ['Mark', 'M'],
  ['Combining_Mark', 'M'],
  ['Nonspacing_Mark', 'Mn'],
  ['Spacing_Mark', 'Mc'],
  ['Enclosing_Mark', 'Me'],
  ['Number', 'N'],
  ['Decimal_Number', 'Nd'],
  ['digit', 'Nd'],
  ['Letter_Number', 'Nl'],
  ['Other_Number', 'No'],
  ['Punctuation', 'P'],
  ['punct', 'P'],
  ['Connector_Punctuation', 'Pc'],
  ['Dash_Punctuation', 'Pd'],
  ['Open_Punctuation', 'Ps'],
  ['Close_Punctuation', 'Pe'],
  ['Initial_Punctuation', 'Pi'],
  ['Final_Punctuation', 'Pf'],
  ['Other_Punctuation', 'Po'],
  ['Symbol', 'S'],
  ['Math_Symbol', 'Sm'],
  ['Currency_Symbol', 'Sc'],
  ['Modifier_Symbol', 'Sk'],
  ['Other_Symbol', 'So'],
  ['Separator', 'Z'],
  ['Space_Separator', 'Zs'],
  ['Line_Separator', 'Zl'],
  ['Paragraph_Separator', 'Zp'],
  ['Control', 'Cc'],
  ['cntrl', 'Cc'],
  ['Format', 'Cf'],
  ['Private_Use', 'Co'],
  ['Surrogate', 'Cs'],
]);

/**
 * Short category names whose RE2 meaning equals ECMAScript's. `C` is absent:
 * RE2's `C` leaves out unassigned code points, ECMAScript's includes them.
 */
const CATEGORIES = new Set([
  'L',
  'Lu',
  'Ll',
  'Lt',
  'Lm',
  'Lo',
  'M',
  'Mn',
  'Mc',
  'Me',
  'N',
  'Nd',
  'Nl',
  'No',
  'P',
  'Pc',
  'Pd',
  'Ps',
  'Pe',
  'Pi',
  'Pf',
  'Po',
  'S',
  'Sm',
  'Sc',
  'Sk',
  'So',
  'Z',
  'Zs',
  'Zl',
  'Zp',
  'Cc',
  'Cf',
  'Co',
  'Cs',
]);

/** A syntax character or `/`: under `u`, the only characters an identity escape (`\.`) may name. */
export function isSyntaxCharacter(c: string): boolean {
  return SYNTAX_CHARACTER.test(c);
}

const SYNTAX_CHARACTER = /^[\^$\\.*+?()[\]{}|/]$/;

const SCRIPT_NAME = /^[A-Z][a-z]+(?:_[A-Z][a-z]+)*$/;

class Refused extends Error {}

function refuse(): never {
  throw new Refused();
}

function hex(cp: number): string {
  return `\\x{${cp.toString(16)}}`;
}

function rangesBody(ranges: readonly (readonly [number, number])[]): string {
  return ranges.map(([lo, hi]) => (lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`)).join('');
}

/** The code points outside `ranges`, which must be sorted and disjoint. */
export function complement(ranges: readonly (readonly [number, number])[]): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of ranges) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

const WS_BODY = rangesBody(WHITESPACE);
const NON_WS_BODY = rangesBody(complement(WHITESPACE));
const DOT = `[^${rangesBody(LINE_TERMINATORS)}]`;
const EVERYTHING = `${hex(0)}-${hex(MAX_CODE_POINT)}`;

type ClassItem =
  | { readonly kind: 'char'; readonly cp: number }
  | { readonly kind: 'set'; readonly body: string }
  | { readonly kind: 'dash' };

export function translatePattern(pattern: string): Translation {
  try {
    // oxlint-disable-next-line no-new -- compiling the pattern is the check
    new RegExp(pattern, 'u');
  } catch {
    return { ok: false };
  }
  try {
    return { ok: true, source: new Translator(pattern).run() };
  } catch (e) {
    if (e instanceof Refused) return { ok: false };
    throw e;
  }
}

class Translator {
  private readonly src: string;
  private i = 0;

  constructor(src: string) {
    this.src = src;
  }

  run(): string {
    let out = '';
    while (this.i < this.src.length) out += this.atom();
    return out;
  }

  private peek(offset = 0): string {
    return this.src[this.i + offset] ?? '';
  }

  private codePoint(): number {
    const cp = this.src.codePointAt(this.i);
    if (cp === undefined) refuse();
    if (cp >= 0xd800 && cp <= 0xdfff) refuse();
    this.i += cp > 0xffff ? 2 : 1;
    return cp;
  }

  private atom(): string {
    const c = this.peek();
    switch (c) {
      case '\\': {
        this.i += 1;
        const esc = this.escape(false);
        return esc.kind === 'char' ? hex(esc.cp) : esc.standalone;
      }
      case '.':
        this.i += 1;
        return DOT;
      case '(':
        return this.group();
      case '[':
        return this.characterClass();
      case '{':
        return this.braces();
      case ')':
      case '|':
      case '^':
      case '$':
      case '*':
      case '+':
      case '?':
        this.i += 1;
        return c;
      default:
        return hex(this.codePoint());
    }
  }

  private group(): string {
    this.i += 1;
    if (this.peek() !== '?') return '(?:';
    const next = this.peek(1);
    if (next === ':') {
      this.i += 2;
      return '(?:';
    }
    if (next === '<' && this.peek(2) !== '=' && this.peek(2) !== '!') {
      const close = this.src.indexOf('>', this.i);
      if (close < 0) refuse();
      this.i = close + 1;
      return '(?:';
    }
    // Lookaround and inline modifiers have no linear-time equivalent here.
    return refuse();
  }

  /** Quantifier braces; the host engine has already checked their shape. */
  private braces(): string {
    const close = this.src.indexOf('}', this.i);
    if (close < 0) refuse();
    const body = this.src.slice(this.i + 1, close);
    if (!/^\d+(?:,\d*)?$/.test(body)) refuse();
    this.i = close + 1;
    return `{${body}}`;
  }

  private characterClass(): string {
    this.i += 1;
    let negated = false;
    if (this.peek() === '^') {
      negated = true;
      this.i += 1;
    }
    const items: ClassItem[] = [];
    while (this.peek() !== ']') {
      if (this.i >= this.src.length) refuse();
      const c = this.peek();
      if (c === '\\') {
        this.i += 1;
        const esc = this.escape(true);
        if (esc.kind === 'char') items.push(esc);
        else items.push({ kind: 'set', body: esc.body });
      } else if (c === '-') {
        this.i += 1;
        items.push({ kind: 'dash' });
      } else {
        items.push({ kind: 'char', cp: this.codePoint() });
      }
    }
    this.i += 1;
    let body = '';
    for (let k = 0; k < items.length; k++) {
      const item = items[k]!;
      const dash = items[k + 1];
      const hi = items[k + 2];
      if (item.kind === 'char' && dash?.kind === 'dash' && hi?.kind === 'char') {
        body += `${hex(item.cp)}-${hex(hi.cp)}`;
        k += 2;
      } else if (item.kind === 'char') {
        body += hex(item.cp);
      } else if (item.kind === 'dash') {
        body += hex(0x2d);
      } else {
        body += item.body;
      }
    }
    if (body === '') return negated ? `[${EVERYTHING}]` : `[^${EVERYTHING}]`;
    return negated ? `[^${body}]` : `[${body}]`;
  }

  /** Reads the escape after a backslash; `inClass` changes `\b` and `\-`. */
  private escape(inClass: boolean): { kind: 'char'; cp: number } | { kind: 'set'; body: string; standalone: string } {
    const c = this.peek();
    this.i += 1;
    switch (c) {
      case 'd':
      case 'D':
      case 'w':
      case 'W':
        return { kind: 'set', body: `\\${c}`, standalone: `\\${c}` };
      case 's':
        return { kind: 'set', body: WS_BODY, standalone: `[${WS_BODY}]` };
      case 'S':
        return { kind: 'set', body: NON_WS_BODY, standalone: `[${NON_WS_BODY}]` };
      case 'b':
        if (inClass) return { kind: 'char', cp: 0x08 };
        return { kind: 'set', body: '', standalone: '\\b' };
      case 'B':
        if (inClass) refuse();
        return { kind: 'set', body: '', standalone: '\\B' };
      case 't':
        return { kind: 'char', cp: 0x09 };
      case 'n':
        return { kind: 'char', cp: 0x0a };
      case 'v':
        return { kind: 'char', cp: 0x0b };
      case 'f':
        return { kind: 'char', cp: 0x0c };
      case 'r':
        return { kind: 'char', cp: 0x0d };
      case '0':
        if (/\d/.test(this.peek())) refuse();
        return { kind: 'char', cp: 0 };
      case 'c': {
        const letter = this.peek();
        if (!/^[A-Za-z]$/.test(letter)) refuse();
        this.i += 1;
        return { kind: 'char', cp: letter.charCodeAt(0) % 32 };
      }
      case 'x': {
        const digits = this.src.slice(this.i, this.i + 2);
        if (!/^[0-9A-Fa-f]{2}$/.test(digits)) refuse();
        this.i += 2;
        return { kind: 'char', cp: parseInt(digits, 16) };
      }
      case 'u':
        return { kind: 'char', cp: this.unicodeEscape() };
      case 'p':
      case 'P':
        return { kind: 'set', ...this.property(c === 'P') };
      default: {
        // Identity escapes: in `u` mode only syntax characters (and `-` in a class).
        if (isSyntaxCharacter(c) || (inClass && c === '-')) return { kind: 'char', cp: c.charCodeAt(0) };
        // Back-references (`\1`, `\k<name>`) cannot run in linear time.
        return refuse();
      }
    }
  }

  private unicodeEscape(): number {
    if (this.peek() === '{') {
      const close = this.src.indexOf('}', this.i);
      const digits = this.src.slice(this.i + 1, close);
      if (close < 0 || !/^[0-9A-Fa-f]{1,8}$/.test(digits)) refuse();
      this.i = close + 1;
      const cp = parseInt(digits, 16);
      if (cp > MAX_CODE_POINT || (cp >= 0xd800 && cp <= 0xdfff)) refuse();
      return cp;
    }
    const lead = this.hex4(this.i);
    if (lead === undefined) refuse();
    this.i += 4;
    if (lead >= 0xd800 && lead <= 0xdbff && this.src.startsWith('\\u', this.i)) {
      const trail = this.hex4(this.i + 2);
      if (trail !== undefined && trail >= 0xdc00 && trail <= 0xdfff) {
        this.i += 6;
        return 0x10000 + ((lead - 0xd800) << 10) + (trail - 0xdc00);
      }
    }
    if (lead >= 0xd800 && lead <= 0xdfff) refuse();
    return lead;
  }

  private hex4(at: number): number | undefined {
    const digits = this.src.slice(at, at + 4);
    return /^[0-9A-Fa-f]{4}$/.test(digits) ? parseInt(digits, 16) : undefined;
  }

  private property(negated: boolean): { body: string; standalone: string } {
    if (this.peek() !== '{') refuse();
    const close = this.src.indexOf('}', this.i);
    if (close < 0) refuse();
    const spec = this.src.slice(this.i + 1, close);
    this.i = close + 1;
    const eq = spec.indexOf('=');
    const name = eq < 0 ? spec : spec.slice(0, eq);
    const value = eq < 0 ? spec : spec.slice(eq + 1);
    let re2Name: string | undefined;
    if (eq < 0 || name === 'General_Category' || name === 'gc') {
      const short = CATEGORY_ALIASES.get(value) ?? value;
      if (CATEGORIES.has(short)) re2Name = short;
      else if (eq < 0 && value === 'Any' && !negated) return { body: EVERYTHING, standalone: `[${EVERYTHING}]` };
      else if (eq < 0 && value === 'ASCII') {
        const body = negated ? `${hex(0x80)}-${hex(MAX_CODE_POINT)}` : `${hex(0)}-${hex(0x7f)}`;
        return { body, standalone: `[${body}]` };
      }
    } else if ((name === 'Script' || name === 'sc') && SCRIPT_NAME.test(value)) {
      re2Name = value;
    }
    if (re2Name === undefined) refuse();
    const escape = `\\${negated ? 'P' : 'p'}{${re2Name}}`;
    return { body: escape, standalone: escape };
  }
}
