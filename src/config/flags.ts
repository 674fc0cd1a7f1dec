/**
 * Command-line flags for the sidecar and its commands, read with node:util
 * parseArgs from the same definitions that render usage and the README's
 * settings tables. A problem is reported as one line naming only the flag.
 */
import { parseArgs } from 'node:util';
import { SettingError } from '../errors.ts';

export interface FlagDef {
  /** `--name`; every flag takes a value (`--name value` or `--name=value`). */
  readonly flag: string;
  readonly env: string;
  readonly default: string;
  readonly doc: string;
}

export type ReadFlags =
  | { readonly kind: 'values'; readonly values: ReadonlyMap<string, string> }
  | { readonly kind: 'help' }
  | { readonly kind: 'version' };

/** Longest flag name echoed in an error line. */
const ECHO = 64;

/**
 * `--help`/`-h` and `--version` win over everything else on the line, so
 * `toolgate --port 1 --help` prints usage. Throws SettingError for an
 * unknown flag, a flag without its value, or a stray argument.
 */
export function readFlags(argv: readonly string[], defs: readonly FlagDef[]): ReadFlags {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean' },
  };
  for (const d of defs) options[d.flag.slice(2)] = { type: 'string' };
  // Non-strict, so the tokens say what went wrong and the line names only the flag.
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  if (tokens.some((t) => t.kind === 'option' && t.name === 'help')) return { kind: 'help' };
  if (tokens.some((t) => t.kind === 'option' && t.name === 'version')) return { kind: 'version' };
  const values = new Map<string, string>();
  for (const t of tokens) {
    if (t.kind === 'positional') throw new SettingError(t.value.slice(0, ECHO), 'unexpected argument');
    if (t.kind !== 'option') continue;
    const flag = t.rawName.startsWith('--') ? `--${t.name}` : t.rawName;
    if (options[t.name]?.type !== 'string' || !t.rawName.startsWith('--'))
      throw new SettingError(flag.slice(0, ECHO), 'unknown flag');
    if (t.value === undefined) throw new SettingError(flag, 'missing value');
    values.set(flag, t.value);
  }
  return { kind: 'values', values };
}

/** How a message names a setting: both spellings, so either one can be looked up. */
export function settingName(d: FlagDef): string {
  return `${d.flag} / ${d.env}`;
}

/** Usage text: the synopsis, then one entry per flag with its variable, default and meaning. */
export function usage(synopsis: string, defs: readonly FlagDef[]): string {
  const lines = [
    synopsis,
    '',
    'Flags (each also an environment variable; a flag wins, an empty variable counts as unset):',
  ];
  for (const d of defs) {
    lines.push(`  ${d.flag} <value>   ${d.env}${d.default === '' ? '' : ` (default ${d.default})`}`);
    lines.push(`      ${d.doc.replaceAll('`', '')}`);
  }
  lines.push('  -h, --help   print this help and exit', '  --version    print the version and exit');
  return `${lines.join('\n')}\n`;
}
