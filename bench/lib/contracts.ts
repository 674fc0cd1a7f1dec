import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { toolDigest } from '../../src/catalogue/digest.ts';
import { catalogueOf } from './request.ts';
import { alongside, startStub, toolgate, type Launcher } from './targets.ts';

/** Tools in the contract-pinning cases' catalogue. */
const PINNED_CATALOGUE_SIZE = 1000;

/**
 * toolgate with the bench policy in front of its own stub serving a
 * 1,000-tool catalogue, every tool's digest listed in the policy; `pinned`
 * turns pinning and lint on in enforce mode, otherwise both are off, so the
 * two cases differ in nothing but the mode.
 */
export function toolgateWithCatalogue(name: string, policyFile: string, pinned: boolean): Launcher {
  return async (ctx) => {
    const stub = await startStub(['--tools', String(PINNED_CATALOGUE_SIZE)]);
    const file = join(dirname(policyFile), `policy-${name}.yaml`);
    writeFileSync(file, readFileSync(policyFile, 'utf8') + pinsSection(pinned ? 'enforce' : 'off'));
    const target = await toolgate(name, { args: ['--policy-file', file] })({ ...ctx, stub }).catch(
      async (err: unknown) => {
        await stub.stop();
        throw err;
      },
    );
    return alongside(target, () => stub.stop());
  };
}

function pinsSection(mode: 'enforce' | 'off'): string {
  const lines = ['contracts:', `  mode: ${mode}`, '  unknownTools: quarantine', `  lint: ${mode}`, '  tools:'];
  for (const tool of catalogueOf(PINNED_CATALOGUE_SIZE)) {
    const d = toolDigest(tool);
    if (!d.ok) throw new Error(`bench tool ${String(tool.name)} has no digest`);
    lines.push(`    ${String(tool.name)}: [${d.digest}]`);
  }
  return `${lines.join('\n')}\n`;
}
