/** One kind of sensitive text the result guard can redact. */
export interface Detector {
  readonly id: string;
  /** One line for the docs table: what it finds. */
  readonly summary: string;
  /** The documented pattern: regex source, or a short description that names the checksum. */
  readonly pattern: string;
  /** Where the pattern comes from. */
  readonly source: string;
  /** Every match, as [start, end) ranges into text, ascending and non-overlapping. */
  find(text: string): ReadonlyArray<readonly [number, number]>;
}

export type Range = readonly [number, number];

export interface RegexSpec {
  readonly id: string;
  readonly summary: string;
  readonly source: string;
  /**
   * Must be global and linear-time: every quantifier bounded, or unbounded only
   * over a class that the next token cannot start, so no start position
   * backtracks over more than a fixed window.
   */
  readonly regex: RegExp;
  /** Literal substrings one of which every match contains; a text without any skips the regex. */
  readonly keywords: readonly string[];
  /** Rejects a candidate the regex alone cannot judge (entropy, decoding, allowlist). */
  readonly accept?: (match: string) => boolean;
}

export function regexDetector(spec: RegexSpec): Detector {
  if (!spec.regex.global) throw new Error(`detector ${spec.id}: the regex must be global`);
  return {
    id: spec.id,
    summary: spec.summary,
    pattern: spec.regex.source,
    source: spec.source,
    find(text) {
      if (!spec.keywords.some((k) => text.includes(k))) return [];
      const ranges: Range[] = [];
      // A fresh copy per call: a shared lastIndex would make concurrent or re-entrant scans interfere.
      const re = new RegExp(spec.regex);
      for (let m = re.exec(text); m !== null; m = re.exec(text)) {
        if (spec.accept === undefined || spec.accept(m[0])) ranges.push([m.index, m.index + m[0].length]);
      }
      return ranges;
    },
  };
}
