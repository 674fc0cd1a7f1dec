/**
 * The harness's settings, from CONFORMANCE_* environment variables, validated
 * once. An empty variable counts as unset. Suite, scenario and requirement
 * settings shape the primary (0.1.16, server-everything) comparison; the
 * pre-release comparisons always run their fixed selections.
 */

import { realpathSync } from 'node:fs';
import type { HarnessOptions } from './harness.ts';

export const ENV_DOC: readonly (readonly [string, string])[] = [
  ['CONFORMANCE_BIN', 'conformance CLI to run instead of the installed one (a bin link or its entry script)'],
  ['CONFORMANCE_TOOLGATE_ENTRY', "toolgate's CLI entry to start (default src/cli.ts; e.g. dist/cli.js after a build)"],
  ['CONFORMANCE_SUITE', 'value for --suite: active (default), all, pending, …'],
  ['CONFORMANCE_SCENARIOS', 'comma-separated scenarios to run instead of a suite'],
  ['CONFORMANCE_REQUIREMENTS', 'value for --requirements, e.g. 2026-07-28 (0.2.0 pre-releases only)'],
  ['CONFORMANCE_TIMEOUT_MS', 'bound on each of the two runs (default 120000)'],
  ['CONFORMANCE_OUTPUT_DIR', 'keep the checks.json files here instead of discarding them'],
  ['CONFORMANCE_DIRECT_ONLY', '1 to run only the direct halves'],
  ['CONFORMANCE_NEXT', '0 to skip the 0.2.0 pre-release comparisons against the v2-SDK fixture (default 1)'],
  ['CONFORMANCE_NEXT_BIN', 'pre-release conformance CLI to run instead of the installed conformance-next'],
];

export type OptionsResult =
  | {
      readonly ok: true;
      readonly options: HarnessOptions;
      /** The pre-release CLI for the 2026-07-28 comparisons; undefined when they are skipped. */
      readonly nextBin: string | undefined;
    }
  | { readonly ok: false; readonly reason: string };

const NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;

export interface Defaults {
  readonly bin: () => string;
  readonly nextBin: () => string;
  readonly toolgateEntry: () => string;
}

export function optionsFromEnv(env: NodeJS.ProcessEnv, defaults: Defaults): OptionsResult {
  const get = (k: string): string | undefined => (env[k] === undefined || env[k] === '' ? undefined : env[k]);

  const suite = get('CONFORMANCE_SUITE') ?? 'active';
  if (!NAME.test(suite)) return { ok: false, reason: 'CONFORMANCE_SUITE: expected a suite name' };

  const scenarios = (get('CONFORMANCE_SCENARIOS') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (!scenarios.every((s) => NAME.test(s)))
    return { ok: false, reason: 'CONFORMANCE_SCENARIOS: expected comma-separated scenario names' };

  const requirements = get('CONFORMANCE_REQUIREMENTS');
  if (requirements !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(requirements)) {
    return { ok: false, reason: 'CONFORMANCE_REQUIREMENTS: expected a revision date like 2026-07-28' };
  }
  if (requirements !== undefined && scenarios.length > 0) {
    return { ok: false, reason: 'CONFORMANCE_REQUIREMENTS and CONFORMANCE_SCENARIOS exclude each other' };
  }

  const rawTimeout = get('CONFORMANCE_TIMEOUT_MS') ?? '120000';
  const timeoutMs = /^\d+$/.test(rawTimeout) ? Number(rawTimeout) : NaN;
  if (!(timeoutMs >= 1000 && timeoutMs <= 3_600_000)) {
    return { ok: false, reason: 'CONFORMANCE_TIMEOUT_MS: expected milliseconds from 1000 to 3600000' };
  }

  const directOnly = get('CONFORMANCE_DIRECT_ONLY');
  if (directOnly !== undefined && directOnly !== '0' && directOnly !== '1') {
    return { ok: false, reason: 'CONFORMANCE_DIRECT_ONLY: expected 0 or 1' };
  }

  const next = get('CONFORMANCE_NEXT');
  if (next !== undefined && next !== '0' && next !== '1') {
    return { ok: false, reason: 'CONFORMANCE_NEXT: expected 0 or 1' };
  }
  let nextBin: string | undefined;
  if (next !== '0') {
    const rawNext = get('CONFORMANCE_NEXT_BIN');
    try {
      nextBin = rawNext === undefined ? defaults.nextBin() : realpathSync(rawNext);
    } catch {
      return { ok: false, reason: 'CONFORMANCE_NEXT_BIN: no such file' };
    }
  }

  let bin: string;
  const rawBin = get('CONFORMANCE_BIN');
  try {
    bin = rawBin === undefined ? defaults.bin() : realpathSync(rawBin);
  } catch {
    return { ok: false, reason: 'CONFORMANCE_BIN: no such file' };
  }

  let toolgateEntry: string;
  const rawEntry = get('CONFORMANCE_TOOLGATE_ENTRY');
  try {
    toolgateEntry = rawEntry === undefined ? defaults.toolgateEntry() : realpathSync(rawEntry);
  } catch {
    return { ok: false, reason: 'CONFORMANCE_TOOLGATE_ENTRY: no such file' };
  }

  return {
    ok: true,
    nextBin,
    options: Object.freeze({
      bin,
      upstream: 'everything',
      toolgateEntry,
      suite,
      scenarios: Object.freeze(scenarios),
      requirements,
      timeoutMs,
      outputDir: get('CONFORMANCE_OUTPUT_DIR'),
      directOnly: directOnly === '1',
    }),
  };
}

/**
 * The pre-release comparisons, both against the v2-SDK fixture: the
 * 2026-07-28 requirement set (the point of running 0.2.0), and 0.2.0's
 * default active suite (2025 revisions, through the SDK's stateless legacy
 * serving), which costs a few seconds more.
 */
export function prereleaseOptions(
  base: HarnessOptions,
  nextBin: string,
): readonly (readonly [string, HarnessOptions])[] {
  const common = { ...base, bin: nextBin, upstream: 'v2-fixture', scenarios: [], suite: 'active' } as const;
  return [
    ['revision_2026_07_28', Object.freeze({ ...common, requirements: '2026-07-28' })],
    // The same, through toolgate in policy mode with everything allowed: the policy path's wire, tasks binding included.
    ['revision_2026_07_28_policy', Object.freeze({ ...common, requirements: '2026-07-28', permissivePolicy: true })],
    ['prerelease_active', Object.freeze({ ...common, requirements: undefined })],
  ];
}
