/**
 * `toolgate inject -f <file|-> [--config <file> | --image <ref>]`: prints the
 * manifests with the sidecar injected into every Pod and pod template that
 * opts in, by the webhook's own rules. Exit 0 with the manifests on stdout;
 * 1 when a pod that opts in cannot be injected (each reason on stderr, nothing
 * on stdout); 2 for bad usage, an unreadable file or an invalid config.
 */
import { readFile } from 'node:fs/promises';
import { text as readStream } from 'node:stream/consumers';
import { loadInjectorConfig, parseInjectorConfig } from '../inject/config.ts';
import type { ConfigResult } from '../inject/config.ts';
import { injectManifests } from '../inject/manifest.ts';
import { DEFAULT_CONFIG_FILE } from '../inject/settings.ts';

export const USAGE = 'usage: toolgate inject -f <file|-> [--config <injector config.yaml> | --image <sidecar image>]';
const FLAGS: Readonly<Record<string, string>> = { '-f': 'file', '--filename': 'file', '--config': 'config', '--image': 'image' };

export async function run(argv: readonly string[]): Promise<number> {
  const args = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf('=');
    const [flag, value] = eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, argv[++i]];
    const key = FLAGS[flag];
    if (key === undefined || value === undefined || args.has(key)) return fail(USAGE);
    args.set(key, value);
  }
  const file = args.get('file');
  if (file === undefined || (args.has('config') && args.has('image'))) return fail(USAGE);

  const config = await configFrom(args.get('config'), args.get('image'));
  if (!config.ok) {
    for (const e of config.errors) process.stderr.write(`toolgate inject: invalid config ${e.path || '/'}  ${e.message}\n`);
    return 2;
  }
  let text: string;
  try {
    text = file === '-' ? await readStream(process.stdin) : await readFile(file, 'utf8');
  } catch {
    return fail('cannot read the manifest file');
  }
  const result = injectManifests(text, config.config);
  if (!result.ok) {
    for (const e of result.errors) process.stderr.write(`toolgate inject: ${e}\n`);
    return 1;
  }
  process.stdout.write(result.text);
  return 0;
}

/** The webhook's config file (the chart renders it), or just an image with every other default. */
async function configFrom(path: string | undefined, image: string | undefined): Promise<ConfigResult> {
  if (image !== undefined) return parseInjectorConfig(JSON.stringify({ image }));
  const fromEnv = process.env.TOOLGATE_INJECT_CONFIG;
  return loadInjectorConfig(path ?? (fromEnv !== undefined && fromEnv !== '' ? fromEnv : DEFAULT_CONFIG_FILE));
}

function fail(message: string): number {
  process.stderr.write(`toolgate inject: ${message}\n`);
  return 2;
}
