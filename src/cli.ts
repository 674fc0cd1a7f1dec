#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { readFlags } from './config/flags.ts';
import { loadSettings, settingDefs, sidecarUsage } from './config/settings.ts';
import { SettingError } from './errors.ts';
import { StartupError } from './errors.ts';
import { start } from './main.ts';
import { log } from './telemetry/log.ts';

interface Command {
  /** One usage text, printed for `toolgate <command> --help`. */
  readonly USAGE: string;
  run(argv: readonly string[]): Promise<number>;
}

/**
 * `toolgate [flags]` runs the sidecar; `toolgate <command> …` runs a tool.
 * Commands load lazily so the sidecar never pays for their dependencies.
 */
const commands: ReadonlyMap<string, () => Promise<Command>> = new Map([
  ['approvals', () => import('./commands/approvals.ts')],
  ['contracts', () => import('./commands/contracts.ts')],
  ['discover-eval', () => import('./commands/discover-eval.ts')],
  ['grants', () => import('./commands/grants.ts')],
  ['inject', () => import('./commands/inject.ts')],
  ['inject-webhook', () => import('./commands/inject-webhook.ts')],
  ['policy', () => import('./commands/policy.ts')],
]);
const COMMAND_NAMES = [...commands.keys()];
const SIDECAR_USAGE = sidecarUsage(COMMAND_NAMES);
/** Longest command name echoed back. */
const ECHO = 64;

/**
 * A reader may stop early (`toolgate contracts list | head -1`). What it read
 * was written; the rest is dropped, and the command ends with the status it
 * would have had, not with an EPIPE stack trace that depends on how fast the
 * reader was. Not for the sidecar: its stdout belongs to the audit sink.
 */
function dropOutputPastClosedPipes(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
    });
  }
}

/** Asking for help is a success: usage goes to stdout and the exit status is 0. */
function print(text: string): number {
  dropOutputPastClosedPipes();
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  return 0;
}

function version(): string {
  // package.json sits one level above both src/ and the built dist/.
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return `toolgate ${typeof pkg.version === 'string' ? pkg.version : 'unknown'}`;
}

async function serve(argv: readonly string[]): Promise<number> {
  let settings;
  try {
    const read = readFlags(argv, settingDefs);
    if (read.kind === 'help') return print(SIDECAR_USAGE);
    if (read.kind === 'version') return print(version());
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
      // What the start opened before it failed (a policy watcher, a Redis
      // client) must not keep a process that serves nothing alive.
      process.exit(2);
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

/** A usage error like an unknown flag: one line saying what is wrong, one listing what is right. */
function unknownCommand(name: string): number {
  process.stderr.write(
    `toolgate: unknown command: ${name.slice(0, ECHO)}\ncommands: ${COMMAND_NAMES.join(', ')} (toolgate <command> --help)\n`,
  );
  return 2;
}

async function main(argv: readonly string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === 'help') {
    if (rest[0] === undefined) return print(SIDECAR_USAGE);
    const topic = commands.get(rest[0]);
    return topic === undefined ? unknownCommand(rest[0]) : print((await topic()).USAGE);
  }
  // The sidecar takes flags only, so a first word that is not a flag names a command.
  if (first === undefined || first.startsWith('-')) return serve(argv);
  const load = commands.get(first);
  if (load === undefined) return unknownCommand(first);
  const command = await load();
  if (rest.includes('--help') || rest.includes('-h')) return print(command.USAGE);
  dropOutputPastClosedPipes();
  return command.run(rest);
}

process.exitCode = await main(process.argv.slice(2));
