/**
 * Grant rows kept in Redis, changed by `toolgate grants`. A change writes the
 * row into the domain's row hash and its two indexes (per principal or `*`,
 * and per tool), increments the control revision and publishes it, all in one
 * Lua script: no reader ever sees a row without its revision or the reverse.
 * Rows are identified by (principal, tool, effect, scopes), as `normalizeRow`
 * canonicalises them, a row asking for approval by `require_approval` as its
 * effect (so it stands beside the plain allow row, as in the policy file);
 * a row's `revision` is the revision it was written at.
 */
import { domainKeys, isDomain } from '../../cache/keys.ts';
import type { DomainKeys } from '../../cache/keys.ts';
import { Cluster } from 'ioredis';
import type { RedisClient } from '../../cache/redis.ts';
import { runScript, script, type Script } from '../../cache/scripts.ts';
import { approvalMember, normalizeRow } from '../../config/policy/grant-row.ts';
import { WILDCARD } from '../../config/policy/grant-row.ts';
import type { GrantRow } from '../../config/policy/grant-row.ts';
import type { GrantSource, RevisionRead, SourceRead } from './types.ts';

/** Most rows one principal read may fetch (its exact rows plus every `*` row); more fails closed. */
const MAX_READ_ROWS = 65_536;

export type ChangeResult =
  | { readonly ok: true; readonly revision: number; readonly changed: boolean }
  | { readonly ok: false; readonly code: 'invalid_row' | 'grants_unavailable' };

export interface RedisGrantSource extends GrantSource {
  readonly kind: 'redis';
  readonly domain: string;
  readonly keys: DomainKeys;
  /** Inserts or replaces the row with this identity, at a new revision. */
  set(row: unknown): Promise<ChangeResult>;
  /** Removes the row with this identity; no revision is spent when there was none. */
  delete(row: unknown): Promise<ChangeResult>;
  /** A new revision without a row change: invalidates every snapshot, cursor and activation. */
  bump(): Promise<ChangeResult>;
  /**
   * After Redis lost data: moves the revision to at least `floor` (the time
   * in ms), above any revision a replica can have confirmed, which ends the
   * replicas' store fault with the rows Redis holds now.
   */
  reset(floor: number): Promise<ChangeResult>;
}

// KEYS: revision, rows, principal-or-wildcard index, tool index. ARGV: identity, JSON head, JSON tail, channel.
const SET = script(`
local rev = redis.call('INCR', KEYS[1])
local value = ARGV[2] .. rev .. ARGV[3]
redis.call('HSET', KEYS[2], ARGV[1], value)
redis.call('HSET', KEYS[3], ARGV[1], value)
redis.call('HSET', KEYS[4], ARGV[1], value)
redis.call('PUBLISH', ARGV[4], rev)
return rev
`);

const DELETE = script(`
if redis.call('HDEL', KEYS[2], ARGV[1]) == 0 then
  return {0, redis.call('GET', KEYS[1]) or '0'}
end
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
local rev = redis.call('INCR', KEYS[1])
redis.call('PUBLISH', ARGV[2], rev)
return {1, tostring(rev)}
`);

const BUMP = script(`
local rev = redis.call('INCR', KEYS[1])
redis.call('PUBLISH', ARGV[1], rev)
return rev
`);

const RESET = script(`
local rev = tonumber(redis.call('GET', KEYS[1]) or '0') + 1
local floor = tonumber(ARGV[1])
if floor > rev then rev = floor end
redis.call('SET', KEYS[1], rev)
redis.call('PUBLISH', ARGV[2], rev)
return rev
`);

// KEYS: revision, then hashes. ARGV: row limit. The revision and the rows are read in one step.
const READ = script(`
local rev = redis.call('GET', KEYS[1]) or '0'
local n = 0
for i = 2, #KEYS do n = n + redis.call('HLEN', KEYS[i]) end
if n > tonumber(ARGV[1]) then return {rev, 'too_many'} end
local out = {rev}
for i = 2, #KEYS do out[#out + 1] = redis.call('HVALS', KEYS[i]) end
return out
`);

const UNAVAILABLE = Object.freeze({ ok: false, code: 'grants_unavailable' } as const);
const INVALID = Object.freeze({ ok: false, code: 'invalid_row' } as const);
const NOT_MASTER = Object.freeze({ ok: false, code: 'grants_unavailable', reason: 'not_master' } as const);

function revisionRead(reply: unknown): RevisionRead {
  const revision = parseRevision(reply);
  return revision === undefined ? UNAVAILABLE : { ok: true, revision };
}

/** A row change: the row checked, then applied by its identity and the script's reply read. */
async function change(row: unknown, apply: (r: GrantRow, identity: string) => Promise<unknown>): Promise<ChangeResult> {
  const clean = normalizeRow(row);
  if (clean === undefined) return INVALID;
  try {
    return interpretChange(await apply(clean, rowIdentity(clean)));
  } catch {
    return UNAVAILABLE;
  }
}

export function createRedisSource(client: RedisClient, domain: string): RedisGrantSource | undefined {
  if (!isDomain(domain)) return undefined;
  const keys = domainKeys(domain);

  const read = async (hashes: readonly string[], limit: number): Promise<SourceRead> => {
    let reply: unknown;
    try {
      reply = await runScript(client, READ, [keys.revision, ...hashes], [limit]);
    } catch {
      return UNAVAILABLE;
    }
    if (!Array.isArray(reply) || reply.length !== hashes.length + 1) return UNAVAILABLE;
    const revision = parseRevision(reply[0]);
    if (revision === undefined) return UNAVAILABLE;
    const rows: GrantRow[] = [];
    for (const values of reply.slice(1)) {
      if (!Array.isArray(values)) return UNAVAILABLE;
      for (const text of values) {
        const row = parseRow(text);
        if (row === undefined) return UNAVAILABLE;
        rows.push(row);
      }
    }
    return { ok: true, rows: Object.freeze(rows), revision };
  };

  const revisionChange = async (s: Script, args: readonly (string | number)[]): Promise<ChangeResult> => {
    try {
      return interpretChange(await runScript(client, s, [keys.revision], args));
    } catch {
      return UNAVAILABLE;
    }
  };
  const indexes = (r: GrantRow) => [
    keys.revision,
    keys.rows,
    r.principal === WILDCARD ? keys.wildcard : keys.principal(r.principal),
    keys.tool(r.tool),
  ];

  return {
    kind: 'redis',
    domain,
    keys,
    readAll: () => read([keys.rows], Number.MAX_SAFE_INTEGER),
    readForPrincipal: (id) =>
      id === WILDCARD ? Promise.resolve(UNAVAILABLE) : read([keys.principal(id), keys.wildcard], MAX_READ_ROWS),
    readForTool: (tool) => read([keys.tool(tool)], MAX_READ_ROWS),
    async readRevision(): Promise<RevisionRead> {
      try {
        // Cluster reads go to the slot's master (a replica answers MOVED);
        // elsewhere ROLE, on the same connection and in the same round
        // trip, says whether the node that answers is the master.
        if (client instanceof Cluster) return revisionRead(await client.get(keys.revision));
        const replies = await client.pipeline().role().get(keys.revision).exec();
        const [role, rev] = replies ?? [];
        if (role === undefined || rev === undefined || role[0] !== null || rev[0] !== null) return UNAVAILABLE;
        if (!Array.isArray(role[1]) || role[1][0] !== 'master') return NOT_MASTER;
        return revisionRead(rev[1]);
      } catch {
        return UNAVAILABLE;
      }
    },
    set: (row) =>
      change(row, (r, id) => {
        const [head, tail] = rowJsonAround(r);
        return runScript(client, SET, indexes(r), [id, head, tail, keys.channel]);
      }),
    delete: (row) => change(stripRevision(row), (r, id) => runScript(client, DELETE, indexes(r), [id, keys.channel])),
    bump: () => revisionChange(BUMP, [keys.channel]),
    reset: (floor) => revisionChange(RESET, [Math.trunc(floor), keys.channel]),
  };
}

/** The identity a row is upserted and deleted by: everything but its revision. */
function rowIdentity(row: GrantRow): string {
  return JSON.stringify([
    row.principal,
    row.tool,
    row.approval === undefined ? row.effect : 'require_approval',
    row.scopes,
  ]);
}

/** Canonical row JSON split where the revision goes, so the script can insert the one it allocates. */
function rowJsonAround(row: GrantRow): [string, string] {
  return [
    `{${approvalMember(row)}"effect":${JSON.stringify(row.effect)},"principal":${JSON.stringify(row.principal)},"revision":`,
    `,"scopes":${JSON.stringify(row.scopes)},"tool":${JSON.stringify(row.tool)}}`,
  ];
}

function stripRevision(row: unknown): unknown {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return row;
  const { revision: _ignored, ...rest } = row as Record<string, unknown>;
  return rest;
}

function interpretChange(reply: unknown): ChangeResult {
  if (Array.isArray(reply)) {
    const revision = parseRevision(reply[1]);
    if (revision === undefined || (reply[0] !== 0 && reply[0] !== 1)) return UNAVAILABLE;
    return { ok: true, revision, changed: reply[0] === 1 };
  }
  const revision = parseRevision(reply);
  return revision === undefined ? UNAVAILABLE : { ok: true, revision, changed: true };
}

/** A revision as Redis returns it: a missing key is revision 0; anything not a safe whole number fails closed. */
function parseRevision(v: unknown): number | undefined {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : undefined;
  if (typeof v !== 'string' || !/^\d{1,16}$/.test(v)) return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : undefined;
}

function parseRow(text: unknown): GrantRow | undefined {
  if (typeof text !== 'string' || text.length > 64 * 1024) return undefined;
  try {
    return normalizeRow(JSON.parse(text));
  } catch {
    return undefined;
  }
}
