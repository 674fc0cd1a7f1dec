/**
 * One run of the conformance CLI in server mode against one URL, read back
 * from the result files it writes.
 */

import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { spawnNode, stop } from './processes.ts';
import { parseScenarioFiles, type CheckRecord, type ScenarioFile } from './results.ts';
import { REPO_ROOT } from './servers.ts';

export interface SuiteOptions {
  /** The conformance CLI's entry script (run with this Node). */
  readonly bin: string;
  readonly url: string;
  /** Fresh, empty directory the CLI writes its results into. */
  readonly outDir: string;
  /** `--suite` value; ignored when scenarios or requirements are given. */
  readonly suite: string;
  /** Run only these scenarios, one CLI invocation each. */
  readonly scenarios: readonly string[];
  /** `--requirements <revision>` (0.2.0 pre-releases only). */
  readonly requirements: string | undefined;
  readonly timeoutMs: number;
}

export interface SuiteRun {
  readonly checks: readonly CheckRecord[];
  /** The CLI's exit codes; non-zero whenever any check failed, so informative only. */
  readonly exitCodes: readonly (number | null)[];
}

export async function runSuite(o: SuiteOptions): Promise<SuiteRun> {
  await mkdir(o.outDir, { recursive: true });
  const base = ['server', '--url', o.url, '--output-dir', o.outDir];
  const invocations =
    o.scenarios.length > 0
      ? o.scenarios.map((s) => [...base, '--scenario', s])
      : [[...base, ...(o.requirements !== undefined ? ['--requirements', o.requirements] : ['--suite', o.suite])]];
  const deadline = Date.now() + o.timeoutMs;
  const exitCodes: (number | null)[] = [];
  for (const args of invocations) {
    exitCodes.push(await runBounded(o.bin, args, deadline - Date.now()));
  }
  const parsed = parseScenarioFiles(await readResults(o.outDir));
  if (!parsed.ok) throw new Error(`conformance results unreadable: ${parsed.reason}`);
  if (parsed.checks.length === 0) throw new Error(`conformance wrote no checks for ${o.url}`);
  return { checks: parsed.checks, exitCodes };
}

async function runBounded(bin: string, args: readonly string[], budgetMs: number): Promise<number | null> {
  if (budgetMs <= 0) throw new Error('conformance time budget exhausted');
  const child = spawnNode('conformance', [bin, ...args], { ...process.env, NO_COLOR: '1' }, REPO_ROOT);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void stop(child);
  }, budgetMs);
  const code = await child.exited;
  clearTimeout(timer);
  if (timedOut) throw new Error(`conformance did not finish within its time budget:\n${child.output()}`);
  return code;
}

async function readResults(outDir: string): Promise<ScenarioFile[]> {
  const files: ScenarioFile[] = [];
  for (const entry of await readdir(outDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const text = await readFile(path.join(outDir, entry.name, 'checks.json'), 'utf8').catch(() => undefined);
    files.push({ dirName: entry.name, text });
  }
  return files;
}
