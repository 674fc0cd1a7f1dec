import { RULES, type Prepared, type Severity } from './rules.ts';
import { lintTexts } from './texts.ts';

/** One finding: which rule, how severe, and where (a JSON pointer into the tool); never the text. */
export interface Finding {
  readonly rule: string;
  readonly severity: Severity;
  readonly pointer: string;
}

export const RULE_IDS: readonly string[] = Object.freeze(RULES.map((r) => r.id));

/** Removed before the word rules read a text, so `ig\u200Bnore` still reads as `ignore`. */
const STRIP =
  // oxlint-disable-next-line no-misleading-character-class -- the class lists invisible characters one by one, on purpose
  /[\u00AD\u200B-\u200F\u2060-\u2064\uFEFF\u180E\u202A-\u202E\u2066-\u2069\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/gu;
const TAGGED_ASCII = /[\u{E0020}-\u{E007E}]+/gu;

/**
 * The lint findings of one tool, one per rule and place. Text hidden in
 * Unicode tag characters is decoded and linted as well: it is what a model
 * reads and a person does not see.
 */
export function lintTool(tool: Readonly<Record<string, unknown>>): Finding[] {
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const { pointer, text, place } of lintTexts(tool)) {
    for (const prepared of readings(text)) {
      for (const rule of RULES) {
        const key = `${rule.id}\u0000${pointer}`;
        if (seen.has(key) || !rule.test(prepared, place)) continue;
        seen.add(key);
        out.push({ rule: rule.id, severity: rule.severity, pointer });
      }
    }
  }
  return out;
}

/**
 * The high-severity rules a free text trips, read as a tool's result (place
 * `result`): what the result guard marks or blocks. The same rules, and the
 * same decoding of hidden tag text, as `lintTool`; ids only, in rule order.
 */
export function scanText(text: string, skip: ReadonlySet<string> = NO_SKIP): string[] {
  const variants = readings(text);
  const out: string[] = [];
  for (const rule of RULES) {
    if (rule.severity !== 'high' || skip.has(rule.id)) continue;
    if (variants.some((v) => rule.test(v, 'result'))) out.push(rule.id);
  }
  return out;
}

const NO_SKIP: ReadonlySet<string> = new Set();

export function hasHigh(findings: readonly Finding[]): boolean {
  return findings.some((f) => f.severity === 'high');
}

/** What `contracts lint --format json` prints last: counts only. */
export interface LintSummary {
  readonly tools: number;
  /** Tools with at least one high-severity finding. */
  readonly high: number;
  /** Findings by rule id, every rule listed. */
  readonly findings_by_rule: Readonly<Record<string, number>>;
}

export function summarize(results: readonly (readonly Finding[])[]): LintSummary {
  const byRule: Record<string, number> = Object.fromEntries(RULE_IDS.map((id) => [id, 0]));
  let high = 0;
  for (const findings of results) {
    if (hasHigh(findings)) high++;
    for (const f of findings) byRule[f.rule] = (byRule[f.rule] ?? 0) + 1;
  }
  return { tools: results.length, high, findings_by_rule: byRule };
}

/** A text as the rules read it, and the text hidden in its Unicode tag characters, if any. */
function readings(text: string): Prepared[] {
  const hidden = decodeTagged(text);
  return hidden === undefined ? [prepare(text)] : [prepare(text), prepare(hidden)];
}

function prepare(text: string): Prepared {
  const lines = text.normalize('NFKC').replace(STRIP, '').toLowerCase();
  const flat = lines.replaceAll(/\s+/g, ' ');
  const sentences = lines
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.replaceAll(/\s+/g, ' ').trim())
    .filter((s) => s.length > 0);
  return { raw: text, lines, flat, sentences };
}

function decodeTagged(text: string): string | undefined {
  const runs = text.match(TAGGED_ASCII);
  if (runs === null) return undefined;
  return runs
    .map((run) => String.fromCodePoint(...Array.from(run, (c) => (c.codePointAt(0) as number) - 0xe0000)))
    .join(' ');
}
