/**
 * `toolgate grants set|delete|list|revision`: the admin command for grant
 * rows kept in Redis. Each change writes the row and the domain's control
 * revision in one script and publishes the revision, so every replica drops
 * what it cached for the old one. Output is JSON lines on stdout; any error is
 * one line on stderr and exit status 2.
 */
import { createRedisClient, REDIS_SETTINGS } from '../cache/redis.ts';
import type { RedisConfig } from '../cache/redis.ts';
import { createRedisSource } from '../grants/sources/redis.ts';
import type { ChangeResult, RedisGrantSource } from '../grants/sources/redis.ts';
import type { GrantRow } from '../config/policy/grant-row.ts';
import { parseFlags, REDIS_FLAGS, redisTarget, whenReady, type Parsed } from './redis-flags.ts';

export const USAGE =
  'usage: toolgate grants set|delete --principal P --tool T --effect allow|deny|require_approval [--scopes a,b]' +
  ' [--approver-scope S [--expires-in 15m] [--self-approval]] | list [--principal P] [--tool T] | revision [--bump | --reset]' +
  ' (all with --redis-url URL [--domain D, default default])';

const VALUE_FLAGS = new Set([
  ...REDIS_FLAGS,
  '--principal',
  '--tool',
  '--effect',
  '--scopes',
  '--approver-scope',
  '--expires-in',
]);
const SWITCHES = new Set(['--bump', '--reset', '--self-approval']);
const ROW_FLAGS = [
  '--principal',
  '--tool',
  '--effect',
  '--scopes',
  '--approver-scope',
  '--expires-in',
  '--self-approval',
];
const ALLOWED: Readonly<Record<string, ReadonlySet<string>>> = {
  set: new Set(ROW_FLAGS),
  delete: new Set(ROW_FLAGS),
  list: new Set(['--principal', '--tool']),
  revision: new Set(['--bump', '--reset']),
};

export interface GrantsIo {
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

interface Invocation {
  readonly action: string;
  readonly flags: ReadonlyMap<string, string>;
  readonly redis: RedisConfig;
  readonly domain: string;
}

export async function run(argv: readonly string[], io: GrantsIo = process): Promise<number> {
  const parsed = parse(argv, io.env);
  if (!parsed.ok) return failure(io, parsed.reason);
  const { redis } = parsed.value;
  const client = createRedisClient(redis, { name: 'toolgate-grants-cli' });
  try {
    if (!(await whenReady(client, redis.connectTimeoutMs))) return failure(io, 'cannot reach Redis');
    const source = createRedisSource(client, parsed.value.domain) as RedisGrantSource;
    const out = await execute(parsed.value, source);
    if (!out.ok) return failure(io, out.reason);
    for (const line of out.value) io.stdout.write(`${line}\n`);
    return 0;
  } finally {
    client.disconnect();
  }
}

async function execute(inv: Invocation, source: RedisGrantSource): Promise<Parsed<string[]>> {
  const { action, flags } = inv;
  if (action === 'set' || action === 'delete') {
    const row = rowFrom(flags);
    if (!row.ok) return row;
    const r = action === 'set' ? await source.set(row.value) : await source.delete(row.value);
    return changeOutput(r, action === 'delete');
  }
  if (action === 'revision') {
    if (flags.has('--bump') && flags.has('--reset'))
      return { ok: false, reason: '--bump and --reset exclude each other' };
    if (flags.has('--bump')) return changeOutput(await source.bump(), false);
    // After Redis lost data: a revision no replica can have confirmed yet.
    if (flags.has('--reset')) return changeOutput(await source.reset(Date.now()), false);
    const r = await source.readRevision();
    return r.ok
      ? { ok: true, value: [JSON.stringify({ revision: r.revision })] }
      : { ok: false, reason: 'Redis refused the command or did not answer in time' };
  }
  const principal = flags.get('--principal');
  const tool = flags.get('--tool');
  const r = tool !== undefined ? await source.readForTool(tool) : await source.readAll();
  if (!r.ok) return { ok: false, reason: 'Redis refused the command, did not answer in time, or holds malformed rows' };
  const rows = r.rows.filter((row) => principal === undefined || row.principal === principal);
  return { ok: true, value: sortRows(rows).map((row) => JSON.stringify(row)) };
}

function changeOutput(r: ChangeResult, isDelete: boolean): Parsed<string[]> {
  if (!r.ok)
    return {
      ok: false,
      reason:
        r.code === 'invalid_row'
          ? 'invalid row (see --principal, --tool, --effect, --scopes, --approver-scope, --expires-in)'
          : 'Redis refused the command or did not answer in time',
    };
  return {
    ok: true,
    value: [JSON.stringify(isDelete ? { deleted: r.changed, revision: r.revision } : { revision: r.revision })],
  };
}

function rowFrom(flags: ReadonlyMap<string, string>): Parsed<unknown> {
  const principal = flags.get('--principal');
  const tool = flags.get('--tool');
  const effect = flags.get('--effect');
  if (principal === undefined || tool === undefined || effect === undefined)
    return { ok: false, reason: '--principal, --tool and --effect are required' };
  if (effect !== 'allow' && effect !== 'deny' && effect !== 'require_approval')
    return { ok: false, reason: '--effect must be allow, deny or require_approval' };
  const scopesText = flags.get('--scopes');
  const scopes = scopesText === undefined || scopesText === '' ? [] : scopesText.split(',').map((s) => s.trim());
  const approverScope = flags.get('--approver-scope');
  const asks = effect === 'require_approval';
  if (asks !== (approverScope !== undefined))
    return { ok: false, reason: '--approver-scope goes with --effect require_approval, and only with it' };
  if (!asks && (flags.has('--expires-in') || flags.has('--self-approval')))
    return { ok: false, reason: '--expires-in and --self-approval go with --effect require_approval' };
  const expiresIn = flags.get('--expires-in');
  const approval = asks
    ? {
        approverScope,
        ...(expiresIn !== undefined && { expiresIn }),
        ...(flags.has('--self-approval') && { selfApproval: true }),
      }
    : undefined;
  return { ok: true, value: { principal, tool, effect, scopes, ...(approval !== undefined && { approval }) } };
}

function sortRows(rows: readonly GrantRow[]): GrantRow[] {
  return [...rows].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
}

function sortKey(r: GrantRow): string {
  return `${r.principal}\u0000${r.tool}\u0000${r.effect}\u0000${r.scopes.join(' ')}`;
}

function parse(argv: readonly string[], env: NodeJS.ProcessEnv): Parsed<Invocation> {
  const [action, ...rest] = argv;
  if (action === undefined || !(action in ALLOWED)) return { ok: false, reason: USAGE };
  const allowed = (name: string) => REDIS_FLAGS.has(name) || (ALLOWED[action] as ReadonlySet<string>).has(name);
  const parsed = parseFlags(rest, VALUE_FLAGS, SWITCHES, allowed, USAGE);
  if (!parsed.ok) return parsed;
  const [stray] = parsed.value.positional;
  if (stray !== undefined)
    return { ok: false, reason: `unknown argument ${JSON.stringify(stray.slice(0, 64))}; ${USAGE}` };
  const target = redisTarget(parsed.value.flags, env);
  if (!target.ok) return target;
  if (target.value === undefined) return { ok: false, reason: `--redis-url (or ${REDIS_SETTINGS.url}) is required` };
  return { ok: true, value: { action, flags: parsed.value.flags, ...target.value } };
}

function failure(io: GrantsIo, reason: string): number {
  io.stderr.write(`toolgate grants: ${reason}\n`);
  return 2;
}
