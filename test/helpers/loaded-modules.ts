/**
 * Child process for the lazy-loading test: records every module the process
 * loads (through the module hooks, so static imports, dynamic imports and
 * require() alike), starts toolgate from the settings in argv and the
 * environment, waits until it is ready, closes it and prints the loaded
 * modules' URLs as one JSON array on stdout.
 */
import { registerHooks } from 'node:module';

const loaded = new Set<string>();
registerHooks({
  load(url, context, nextLoad) {
    loaded.add(url);
    return nextLoad(url, context);
  },
});

const { loadSettings } = await import('../../src/config/settings.ts');
const { start } = await import('../../src/main.ts');
const gate = await start(loadSettings(process.argv.slice(2), process.env));
await gate.ready;
await gate.close();
process.stdout.write(`${JSON.stringify([...loaded])}\n`);
