/**
 * Where a command finds the MCP server, with the sidecar's own meaning:
 * `--upstream` is the server's origin and `--mcp-path` the endpoint's path,
 * each falling back to the sidecar's variable (TOOLGATE_UPSTREAM,
 * TOOLGATE_MCP_PATH) and then to its default. So a command run beside the
 * sidecar reaches the server the sidecar fronts with no flag at all.
 */
import { readSetting } from '../config/settings.ts';
import type { Parsed } from './redis-flags.ts';

export const UPSTREAM_FLAGS: readonly string[] = ['--upstream', '--mcp-path'];

export interface UpstreamTarget {
  /** The MCP endpoint: origin and path. */
  readonly endpoint: URL;
  /** Set when the flags used a form kept only for old scripts. */
  readonly deprecation?: string;
}

/** Undefined value: no upstream named by a flag or the environment. */
export function upstreamTarget(
  flags: ReadonlyMap<string, string>,
  env: NodeJS.ProcessEnv,
): Parsed<UpstreamTarget | undefined> {
  const fromEnv = (flag: string, variable: string) =>
    flags.get(flag) ?? (env[variable] === '' ? undefined : env[variable]);
  const raw = fromEnv('--upstream', 'TOOLGATE_UPSTREAM');
  if (raw === undefined) return { ok: true, value: undefined };
  let originText = raw;
  let pathText = fromEnv('--mcp-path', 'TOOLGATE_MCP_PATH');
  let deprecation: string | undefined;
  // `contracts --upstream` once took the endpoint URL; that form still works, with a note.
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (flags.has('--upstream') && url !== undefined && url.pathname !== '/' && url.search === '' && url.hash === '') {
    if (flags.has('--mcp-path'))
      return { ok: false, reason: '--upstream is the origin of the MCP server; give its path with --mcp-path only' };
    originText = url.origin;
    pathText = url.pathname;
    deprecation = `--upstream with a path is deprecated: give the origin and the path apart (--upstream ${url.origin} --mcp-path ${url.pathname})`;
  }
  const source = (flag: string, variable: string) => (flags.has(flag) ? flag : variable);
  const origin = readSetting('upstream', originText);
  if (!origin.ok)
    return { ok: false, reason: `invalid setting ${source('--upstream', 'TOOLGATE_UPSTREAM')}: ${origin.problem}` };
  const path = readSetting('mcpPath', pathText);
  if (!path.ok)
    return { ok: false, reason: `invalid setting ${source('--mcp-path', 'TOOLGATE_MCP_PATH')}: ${path.problem}` };
  return {
    ok: true,
    value: { endpoint: new URL(path.value, origin.value), ...(deprecation !== undefined && { deprecation }) },
  };
}
