/**
 * `toolgate inject -f <file|-> [--config <file> | --image <ref>]`: prints the
 * manifests with the sidecar injected into every Pod and pod template that
 * opts in, by the webhook's own rules. Exit 0 with the manifests on stdout;
 * 1 when a pod that opts in cannot be injected (each reason on stderr, nothing
 * on stdout); 2 for bad usage, an unreadable file or an invalid config, each
 * message naming the flag or the file.
 */
import { readFile } from 'node:fs/promises';
import { text as readStream } from 'node:stream/consumers';
import { configProblems, loadInjectorConfig, parseInjectorConfig } from '../inject/config.ts';
import type { ConfigResult } from '../inject/config.ts';
import { injectManifests } from '../inject/manifest.ts';
import { DEFAULT_CONFIG_FILE } from '../inject/settings.ts';

export const USAGE = 'usage: toolgate inject -f <file|-> [--config <injector config.yaml> | --image <sidecar image>]';
const FLAGS: Readonly<Record<string, string>> = {
  '-f': 'file',
  '--filename': 'file',
  '--config': 'config',
  '--image': 'image',
};
/** Longest argument echoed back. */
const ECHO = 64;

export async function run(argv: readonly string[]): Promise<number> {
  const args = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf('=');
    const [flag, value] = eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, argv[++i]];
    const key = Object.hasOwn(FLAGS, flag) ? FLAGS[flag] : undefined;
    if (key === undefined) return fail(`unknown argument ${JSON.stringify(flag.slice(0, ECHO))}`, true);
    if (value === undefined) return fail(`${flag} needs a value`, true);
    if (args.has(key)) return fail(`${flag} is given twice`, true);
    args.set(key, value);
  }
  const file = args.get('file');
  if (file === undefined) return fail('-f is required: the manifests file, or - for stdin', true);
  if (args.has('config') && args.has('image')) return fail('--config and --image exclude each other', true);

  const source = configSource(args.get('config'));
  const config = await configFrom(source, args.get('image'));
  if (!config.ok) {
    for (const line of configProblems(source.file, config.errors))
      process.stderr.write(`toolgate inject: ${line}${source.hint}\n`);
    return 2;
  }
  let text: string;
  try {
    text = file === '-' ? await readStream(process.stdin) : await readFile(file, 'utf8');
  } catch (err) {
    return fail(
      `cannot read the manifests ${file === '-' ? 'from stdin' : `file ${file}`} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const result = injectManifests(text, config.config);
  if (!result.ok) {
    for (const e of result.errors) process.stderr.write(`toolgate inject: ${e}\n`);
    return 1;
  }
  process.stdout.write(result.text);
  return 0;
}

/** Which config file is read, and what to say when it is the one nobody named. */
function configSource(flag: string | undefined): { file: string; hint: string } {
  if (flag !== undefined) return { file: flag, hint: '' };
  const fromEnv = process.env.TOOLGATE_INJECT_CONFIG;
  if (fromEnv !== undefined && fromEnv !== '') return { file: fromEnv, hint: ' (from TOOLGATE_INJECT_CONFIG)' };
  return {
    file: DEFAULT_CONFIG_FILE,
    hint: ' (the default; give --config FILE, --image REF or TOOLGATE_INJECT_CONFIG)',
  };
}

/** The webhook's config file (the chart renders it), or just an image with every other default. */
async function configFrom(source: { file: string }, image: string | undefined): Promise<ConfigResult> {
  return image !== undefined ? parseInjectorConfig(JSON.stringify({ image })) : loadInjectorConfig(source.file);
}

function fail(message: string, usage = false): number {
  process.stderr.write(`toolgate inject: ${message}\n${usage ? `${USAGE}\n` : ''}`);
  return 2;
}
