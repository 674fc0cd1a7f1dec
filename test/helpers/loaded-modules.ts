/**
 * Child process for the lazy-loading test: records every module the process
 * loads (through the module hooks, so static imports, dynamic imports and
 * require() alike), starts toolgate from the settings in argv and the
 * environment, waits until it is ready, closes it and prints the loaded
 * modules' URLs as one JSON array on stdout. Node's own internal modules,
 * which the hooks do not see, are listed as `node:internal/...`.
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
// Undocumented, so untyped: Node's record of the built-in modules it has loaded.
const { moduleLoadList } = process as unknown as { moduleLoadList: readonly string[] };
const internal = moduleLoadList
  .filter((m) => m.startsWith('NativeModule internal/'))
  .map((m) => `node:${m.slice('NativeModule '.length)}`);
process.stdout.write(`${JSON.stringify([...loaded, ...internal])}\n`);
