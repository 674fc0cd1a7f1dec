#!/usr/bin/env node
import { loadSettings } from './config/settings.ts';
import { SettingError } from './errors.ts';
import { StartupError } from './errors.ts';
import { start } from './main.ts';
import { log } from './telemetry/log.ts';

/**
 * `toolgate [flags]` runs the sidecar; `toolgate <command> …` runs a tool.
 * Commands load lazily so the sidecar never pays for their dependencies.
 */
const commands: Readonly<Record<string, () => Promise<{ run(argv: readonly string[]): Promise<number> }>>> = {
  contracts: () => import('./commands/contracts.ts'),
  'discover-eval': () => import('./commands/discover-eval.ts'),
  grants: () => import('./commands/grants.ts'),
  inject: () => import('./commands/inject.ts'),
  'inject-webhook': () => import('./commands/inject-webhook.ts'),
  policy: () => import('./commands/policy.ts'),
};

async function serve(argv: readonly string[]): Promise<number> {
  let settings;
  try {
    settings = loadSettings(argv, process.env);
  } catch (err) {
    if (err instanceof SettingError) {
      process.stderr.write(`toolgate: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  let gate;
  try {
    gate = await start(settings);
  } catch (err) {
    if (err instanceof StartupError) {
      process.stderr.write(`toolgate: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info('shutting down', { signal, drainTimeoutMs: settings.drainTimeoutMs });
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  await gate.close();
  return 0;
}

const [first, ...rest] = process.argv.slice(2);
const command = first !== undefined ? commands[first] : undefined;
const code = command !== undefined ? await (await command()).run(rest) : await serve(process.argv.slice(2));
process.exitCode = code;
