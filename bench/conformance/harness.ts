/**
 * One comparison: the conformance suite against an upstream directly, then
 * against toolgate in front of a fresh upstream (server-everything keeps
 * per-session state, so the second run must not inherit the first's). The
 * upstream is server-everything for the 2025 revisions or the v2-SDK fixture
 * for 2026-07-28. Used by `npm run conformance` and by the e2e test.
 */

import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stop, stopAll } from './processes.ts';
import { compare, tally, type CheckRecord, type Comparison, type Tally } from './results.ts';
import { packageBin, REPO_ROOT, startEverything, startToolgate, startV2Fixture } from './servers.ts';
import { writePermissivePolicy } from './permissive-policy.ts';
import { runSuite } from './suite.ts';

export type Upstream = 'everything' | 'v2-fixture';

export interface HarnessOptions {
  /** The conformance CLI entry script; defaults to the repo's installed one. */
  readonly bin: string;
  /** What the suite runs against: server-everything, or the 2026-07-28 v2-SDK fixture. */
  readonly upstream: Upstream;
  /** toolgate's CLI entry script, normally src/cli.ts. */
  readonly toolgateEntry: string;
  readonly suite: string;
  readonly scenarios: readonly string[];
  readonly requirements: string | undefined;
  /** Bound on each of the two conformance runs. */
  readonly timeoutMs: number;
  /** Keep results in a fresh `run-*` directory under this one instead of discarding them. */
  readonly outputDir: string | undefined;
  /** Skip the run through toolgate (for developing the harness without a proxy). */
  readonly directOnly: boolean;
  /** toolgate in policy mode with a policy allowing all the upstream offers (`permissive-policy.ts`); else without a policy. */
  readonly permissivePolicy?: boolean;
}

export interface SideResult {
  readonly checks: readonly CheckRecord[];
  readonly tally: Tally;
}

export interface HarnessReport {
  /** The conformance CLI that ran, and against what. */
  readonly bin: string;
  readonly upstream: Upstream;
  readonly direct: SideResult;
  readonly toolgate: SideResult | undefined;
  readonly comparison: Comparison | undefined;
  /** Where the checks.json files were kept; undefined when they were discarded. */
  readonly resultsDir: string | undefined;
}

export function defaultBin(): string {
  return packageBin('@modelcontextprotocol/conformance', 'conformance');
}

/** The 0.2.0 pre-release, installed under the alias `conformance-next` beside 0.1.16. */
export function defaultNextBin(): string {
  return packageBin('conformance-next', 'conformance');
}

export function defaultToolgateEntry(): string {
  return path.join(REPO_ROOT, 'src', 'cli.ts');
}

export async function runComparison(o: HarnessOptions): Promise<HarnessReport> {
  if (o.outputDir !== undefined) await mkdir(o.outputDir, { recursive: true });
  const root = await mkdtemp(
    o.outputDir !== undefined ? path.join(o.outputDir, 'run-') : path.join(os.tmpdir(), 'toolgate-conformance-'),
  );
  const resultsDir = o.outputDir !== undefined ? root : undefined;
  try {
    const direct = await runSide(o, path.join(root, 'direct'), false);
    if (o.directOnly)
      return { bin: o.bin, upstream: o.upstream, direct, toolgate: undefined, comparison: undefined, resultsDir };
    const toolgate = await runSide(o, path.join(root, 'toolgate'), true);
    return {
      bin: o.bin,
      upstream: o.upstream,
      direct,
      toolgate,
      comparison: compare(direct.checks, toolgate.checks),
      resultsDir,
    };
  } finally {
    await stopAll();
    if (o.outputDir === undefined) await rm(root, { recursive: true, force: true });
  }
}

async function runSide(o: HarnessOptions, outDir: string, viaToolgate: boolean): Promise<SideResult> {
  const upstream = o.upstream === 'v2-fixture' ? await startV2Fixture() : await startEverything();
  try {
    const policy =
      viaToolgate && o.permissivePolicy === true
        ? await writePermissivePolicy(upstream.mcpUrl, path.dirname(outDir))
        : undefined;
    const proxy = viaToolgate ? await startToolgate(o.toolgateEntry, upstream.port, policy) : undefined;
    try {
      const run = await runSuite({
        bin: o.bin,
        url: proxy?.mcpUrl ?? upstream.mcpUrl,
        outDir,
        suite: o.suite,
        scenarios: o.scenarios,
        requirements: o.requirements,
        timeoutMs: o.timeoutMs,
      });
      return { checks: run.checks, tally: tally(run.checks) };
    } finally {
      if (proxy !== undefined) await stop(proxy.child);
    }
  } finally {
    await stop(upstream.child);
  }
}
