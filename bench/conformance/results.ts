/**
 * Reads the conformance tool's own machine-readable output (one
 * `server-<scenario>-<timestamp>/checks.json` per scenario) instead of its
 * coloured summary, and compares two runs by the checks they passed.
 */

export type CheckStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';

export interface CheckRecord {
  /** `<scenario>/<check id>`, with `#n` appended to the nth repeat of an id within a scenario. */
  readonly key: string;
  readonly scenario: string;
  readonly status: CheckStatus;
  readonly errorMessage: string | undefined;
  readonly details: unknown;
}

export interface ScenarioFile {
  /** The result directory's base name. */
  readonly dirName: string;
  /** The raw text of its checks.json; undefined when the scenario crashed before writing one. */
  readonly text: string | undefined;
}

export type ParseResult =
  | { readonly ok: true; readonly checks: readonly CheckRecord[] }
  | { readonly ok: false; readonly reason: string };

export interface Tally {
  readonly passed: number;
  readonly failed: number;
}

export interface Comparison {
  readonly identical: boolean;
  /** Passed directly, not through toolgate. */
  readonly onlyDirect: readonly string[];
  /** Passed through toolgate, not directly. */
  readonly onlyToolgate: readonly string[];
}

/** Check id recorded for a scenario that left no checks.json. */
export const CRASHED = 'scenario-crashed';

const STATUSES: ReadonlySet<string> = new Set(['SUCCESS', 'FAILURE', 'WARNING', 'INFO', 'SKIPPED']);

// The tool names result directories `${dir}/server-${scenario}-${ISO time with : and . as -}`.
const DIR_NAME = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

export function scenarioOf(dirName: string): string | undefined {
  return DIR_NAME.exec(dirName)?.[1];
}

export function parseScenarioFiles(files: readonly ScenarioFile[]): ParseResult {
  const checks: CheckRecord[] = [];
  const seenScenarios = new Set<string>();
  for (const file of [...files].sort((a, b) => compareText(a.dirName, b.dirName))) {
    const scenario = scenarioOf(file.dirName);
    if (scenario === undefined) return { ok: false, reason: `unexpected result directory ${file.dirName}` };
    if (seenScenarios.has(scenario)) return { ok: false, reason: `scenario ${scenario} has two result directories` };
    seenScenarios.add(scenario);
    if (file.text === undefined) {
      // The tool scores a scenario that threw as one failure; so does this.
      checks.push({
        key: `${scenario}/${CRASHED}`,
        scenario,
        status: 'FAILURE',
        errorMessage: 'scenario threw before writing checks.json',
        details: undefined,
      });
      continue;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(file.text);
    } catch {
      return { ok: false, reason: `checks.json of ${scenario} is not JSON` };
    }
    if (!Array.isArray(raw)) return { ok: false, reason: `checks.json of ${scenario} is not an array` };
    const repeats = new Map<string, number>();
    for (const item of raw) {
      if (
        !isRecord(item) ||
        typeof item.id !== 'string' ||
        typeof item.status !== 'string' ||
        !STATUSES.has(item.status)
      ) {
        return { ok: false, reason: `checks.json of ${scenario} holds a malformed check` };
      }
      const n = (repeats.get(item.id) ?? 0) + 1;
      repeats.set(item.id, n);
      checks.push({
        key: n === 1 ? `${scenario}/${item.id}` : `${scenario}/${item.id}#${n}`,
        scenario,
        status: item.status as CheckStatus,
        errorMessage: typeof item.errorMessage === 'string' ? item.errorMessage : undefined,
        details: item.details,
      });
    }
  }
  return { ok: true, checks };
}

/** Counts as the tool's own summary does: only SUCCESS and FAILURE are scored. */
export function tally(checks: readonly CheckRecord[]): Tally {
  let passed = 0;
  let failed = 0;
  for (const c of checks) {
    if (c.status === 'SUCCESS') passed++;
    else if (c.status === 'FAILURE') failed++;
  }
  return { passed, failed };
}

export function passedKeys(checks: readonly CheckRecord[]): ReadonlySet<string> {
  return new Set(checks.filter((c) => c.status === 'SUCCESS').map((c) => c.key));
}

export function compare(direct: readonly CheckRecord[], toolgate: readonly CheckRecord[]): Comparison {
  const d = passedKeys(direct);
  const t = passedKeys(toolgate);
  const onlyDirect = [...d].filter((k) => !t.has(k)).sort(compareText);
  const onlyToolgate = [...t].filter((k) => !d.has(k)).sort(compareText);
  return { identical: onlyDirect.length === 0 && onlyToolgate.length === 0, onlyDirect, onlyToolgate };
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
