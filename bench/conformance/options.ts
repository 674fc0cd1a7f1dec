/**
 * The harness's settings, from CONFORMANCE_* environment variables, validated
 * once. An empty variable counts as unset.
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
  ['CONFORMANCE_DIRECT_ONLY', '1 to run only against server-everything directly'],
];

export type OptionsResult =
  | { readonly ok: true; readonly options: HarnessOptions }
  | { readonly ok: false; readonly reason: string };

const NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;

export interface Defaults {
  readonly bin: () => string;
  readonly toolgateEntry: () => string;
}

export function optionsFromEnv(env: NodeJS.ProcessEnv, defaults: Defaults): OptionsResult {
  const get = (k: string): string | undefined => (env[k] === undefined || env[k] === '' ? undefined : env[k]);

  const suite = get('CONFORMANCE_SUITE') ?? 'active';
  if (!NAME.test(suite)) return { ok: false, reason: 'CONFORMANCE_SUITE: expected a suite name' };

  const scenarios = (get('CONFORMANCE_SCENARIOS') ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (!scenarios.every((s) => NAME.test(s))) return { ok: false, reason: 'CONFORMANCE_SCENARIOS: expected comma-separated scenario names' };

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
    options: Object.freeze({
      bin,
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
