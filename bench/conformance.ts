/**
 * `npm run conformance`: the official MCP conformance suite (server mode)
 * against server-everything, directly and through toolgate. Prints the checks
 * whose outcome differs, then as its last line one JSON object:
 *   {"direct":{"passed":N,"failed":M},"toolgate":{"passed":N,"failed":M},"identical":true|false}
 * `identical` compares the sets of passed checks. Exit 1 when a check that
 * passes directly fails through toolgate (a transparency bug), 2 when the
 * harness itself could not run, else 0: a check that passes only through
 * toolgate is printed, not fatal, since toolgate answers some malformed
 * requests itself (header validation) that the server lets through.
 * Settings: CONFORMANCE_* environment variables, see bench/conformance/options.ts.
 */

import { defaultBin, defaultToolgateEntry, runComparison, type HarnessReport } from './conformance/harness.ts';
import { optionsFromEnv } from './conformance/options.ts';
import { stopAll } from './conformance/processes.ts';
import type { CheckRecord } from './conformance/results.ts';

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

const parsed = optionsFromEnv(process.env, { bin: defaultBin, toolgateEntry: defaultToolgateEntry });
if (!parsed.ok) {
  console.error(`conformance: ${parsed.reason}`);
  process.exit(2);
}

try {
  const report = await runComparison(parsed.options);
  printReport(report);
  process.exitCode = (report.comparison?.onlyDirect.length ?? 0) > 0 ? 1 : 0;
} catch (err) {
  console.error(`conformance: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 2;
}

function printReport(r: HarnessReport): void {
  console.log(`conformance ${parsed.ok ? parsed.options.bin : ''}`);
  printFailures('direct', r.direct.checks);
  if (r.toolgate !== undefined) printFailures('toolgate', r.toolgate.checks);
  if (r.toolgate !== undefined && r.comparison !== undefined) {
    const before = new Map(r.direct.checks.map((c) => [c.key, c]));
    const after = new Map(r.toolgate.checks.map((c) => [c.key, c]));
    const differing = [...r.comparison.onlyDirect, ...r.comparison.onlyToolgate];
    if (differing.length > 0) console.log('checks whose outcome differs (direct → toolgate):');
    for (const key of differing) {
      const d = before.get(key);
      const t = after.get(key);
      console.log(`  ${key}: ${d?.status ?? 'absent'} → ${t?.status ?? 'absent'}${t?.errorMessage ? ` — ${t.errorMessage}` : ''}`);
      if (t?.details !== undefined) console.log(`    toolgate details: ${JSON.stringify(t.details)}`);
    }
  }
  if (r.resultsDir !== undefined) console.log(`results kept in ${r.resultsDir}`);
  console.log(JSON.stringify({
    direct: r.direct.tally,
    toolgate: r.toolgate?.tally ?? null,
    identical: r.comparison?.identical ?? null,
  }));
}

function printFailures(side: string, checks: readonly CheckRecord[]): void {
  const failed = checks.filter((c) => c.status === 'FAILURE');
  console.log(`${side}: ${failed.length} failed check(s)`);
  for (const c of failed) console.log(`  ${c.key}: ${c.errorMessage ?? 'no message'}`);
}
