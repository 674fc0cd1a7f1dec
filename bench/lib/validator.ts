import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startValidator } from '../../test/helpers/validator-process.ts';
import { pin } from './cpus.ts';
import { alongside, toolgate, type Launcher } from './targets.ts';

/**
 * The policy case plus one external validator: a real validator process
 * (test/helpers/validator-server.ts, answering valid) asked on every
 * tools/call, active mode, so every measured call waits for its answer.
 */
export function toolgateWithValidator(name: string, policyFile: string): Launcher {
  return async (ctx) => {
    const validator = await startValidator({ quiet: true });
    pin(validator.pid, 'helpers');
    const withValidator = join(dirname(policyFile), 'policy-validator.yaml');
    writeFileSync(
      withValidator,
      `${readFileSync(policyFile, 'utf8')}validators:\n  - { name: bench, target: "${validator.target}", hooks: [{ event: tools/call, phase: request }], timeoutMs: 2000 }\n`,
    );
    const target = await toolgate(name, { args: ['--policy-file', withValidator] })(ctx).catch(async (err: unknown) => {
      await validator.close();
      throw err;
    });
    return alongside(target, () => validator.close());
  };
}
