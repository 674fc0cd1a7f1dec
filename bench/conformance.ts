/**
 * `npm run conformance`: the official MCP conformance suite (server mode),
 * directly and through toolgate, in up to three comparisons:
 *   - 0.1.16's active suite against server-everything (the primary one);
 *   - revision_2026_07_28: the 0.2.0 pre-release with `--requirements
 *     2026-07-28` against the stateless v2-SDK fixture (bench/conformance/v2-server.ts);
 *   - revision_2026_07_28_policy: the same, with toolgate in policy mode under a
 *     policy that allows everything the fixture offers (bench/conformance/permissive-policy.ts);
 *   - prerelease_active: the pre-release's active suite against the same fixture.
 * Prints failed and differing checks, then as its last line one JSON object:
 *   {"direct":{"passed":N,"failed":M},"toolgate":{…},"identical":true|false,
 *    "revision_2026_07_28":{"direct":…,"toolgate":…,"identical":…},"prerelease_active":{…}}
 * Top-level direct/toolgate are the primary comparison; top-level `identical`
 * is true only when every comparison's sets of passed checks are equal.
 * Exit 1 when a check that passes directly fails through toolgate in any
 * comparison (a transparency bug), 2 when the harness itself could not run,
 * else 0: a check that passes only through toolgate is printed, not fatal,
 * since toolgate answers some malformed requests itself (header validation)
 * that a lenient server lets through.
 * Settings: CONFORMANCE_* environment variables, see bench/conformance/options.ts.
 */

import {
  defaultBin,
  defaultNextBin,
  defaultToolgateEntry,
  runComparison,
  type HarnessReport,
} from './conformance/harness.ts';
import { optionsFromEnv, prereleaseOptions } from './conformance/options.ts';
import { stopAll } from './conformance/processes.ts';
import type { CheckRecord } from './conformance/results.ts';

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

const parsed = optionsFromEnv(process.env, {
  bin: defaultBin,
  nextBin: defaultNextBin,
  toolgateEntry: defaultToolgateEntry,
});
if (!parsed.ok) {
  console.error(`conformance: ${parsed.reason}`);
  process.exit(2);
}

try {
  const runs: [string, HarnessReport][] = [['primary', await runComparison(parsed.options)]];
  if (parsed.nextBin !== undefined) {
    for (const [key, options] of prereleaseOptions(parsed.options, parsed.nextBin))
      runs.push([key, await runComparison(options)]);
  }
  for (const [key, report] of runs) printReport(key, report);
  const lost = runs.some(([, r]) => (r.comparison?.onlyDirect.length ?? 0) > 0);
  process.exitCode = lost ? 1 : 0;
  console.log(JSON.stringify(summary(runs)));
} catch (err) {
  console.error(`conformance: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 2;
}

function summary(runs: readonly (readonly [string, HarnessReport])[]): Record<string, unknown> {
  const side = (r: HarnessReport) => ({
    direct: r.direct.tally,
    toolgate: r.toolgate?.tally ?? null,
    identical: r.comparison?.identical ?? null,
  });
  const all = runs.map(([, r]) => r.comparison?.identical ?? null);
  const [, primary] = runs[0] as readonly [string, HarnessReport];
  const out: Record<string, unknown> = { ...side(primary), identical: all.includes(null) ? null : all.every(Boolean) };
  for (const [key, r] of runs.slice(1)) out[key] = side(r);
  return out;
}

function printReport(key: string, r: HarnessReport): void {
  console.log(`== ${key}: ${r.bin} against ${r.upstream}`);
  printFailures('direct', r.direct.checks);
  if (r.toolgate !== undefined) printFailures('toolgate', r.toolgate.checks);
  if (r.toolgate !== undefined && r.comparison !== undefined) {
    const before = new Map(r.direct.checks.map((c) => [c.key, c]));
    const after = new Map(r.toolgate.checks.map((c) => [c.key, c]));
    const differing = [...r.comparison.onlyDirect, ...r.comparison.onlyToolgate];
    if (differing.length > 0) console.log('checks whose outcome differs (direct → toolgate):');
    for (const k of differing) {
      const d = before.get(k);
      const t = after.get(k);
      console.log(
        `  ${k}: ${d?.status ?? 'absent'} → ${t?.status ?? 'absent'}${t?.errorMessage ? ` — ${t.errorMessage}` : ''}`,
      );
      if (t?.details !== undefined) console.log(`    toolgate details: ${JSON.stringify(t.details)}`);
    }
  }
  if (r.resultsDir !== undefined) console.log(`results kept in ${r.resultsDir}`);
}

function printFailures(side: string, checks: readonly CheckRecord[]): void {
  const failed = checks.filter((c) => c.status === 'FAILURE');
  console.log(`${side}: ${failed.length} failed check(s)`);
  for (const c of failed) console.log(`  ${c.key}: ${c.errorMessage ?? 'no message'}`);
}
