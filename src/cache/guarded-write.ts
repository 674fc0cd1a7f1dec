/**
 * The discipline for a Redis write whose loss, or whose late arrival, would
 * mean a second execution or an open door (a one-time token's use, an
 * approval's spend, an idempotency claim): it counts only when Redis vouches
 * for it, and one that cannot be vouched for is taken back.
 *
 * - The write is one script, so whatever it checks (an epoch marker, the
 *   record's state) is checked in the same atomic step as the write.
 * - With `waitReplicas`, `WAIT` follows it in one pipeline on one connection
 *   (in a Cluster both go to the key's master), so a failover cannot promote
 *   a replica that never saw it. Unacknowledged, the write is taken back.
 * - The whole exchange has a deadline. Missed, the write may still run later
 *   (Redis stalled, ioredis re-sends after a reconnect): the undo is sent at
 *   once on the same connection, so it runs after the write, never before,
 *   and before any retry the refusal invites.
 * - Anything else fails closed: the caller gets `ok: false`, never a guess.
 *
 * `undo` must be a compare-and-delete (or compare-and-restore): it takes back
 * only what this very write did, identified by a value only this write knows.
 */
import { randomUUID } from 'node:crypto';
import { RedisBreakerOpenError, redisCall } from './breaker.ts';
import type { RedisClient } from './redis.ts';
import { runScript, script, type Script } from './scripts.ts';

/**
 * An epoch marker: `<ms when created>:<random>`, kept beside records whose
 * loss must be noticed; the script writing a record compares it in the same
 * step. A marker replaced means the records beside it were lost then.
 */
export function freshMarker(now: number): string {
  return `${now}:${randomUUID()}`;
}

/**
 * A script that first compares the epoch marker, in the same atomic step as
 * what `body` writes. KEYS[1] is the marker, ARGV[1] the marker the caller
 * knows ('' for none), ARGV[2] a fresh one. A missing marker is created from
 * ARGV[2]; a missing or other marker returns {0, marker in force} and `body`
 * does not run.
 */
export function epochScript(body: string): Script {
  return script(`
local marker = redis.call('GET', KEYS[1])
if not marker then
  redis.call('SET', KEYS[1], ARGV[2])
  return {0, ARGV[2]}
end
if marker ~= ARGV[1] then return {0, marker} end
${body.trimStart()}`);
}

/** The moment a marker was created; one that does not say (written by hand) counts from now. */
export function markerCreatedAt(marker: string, now: number): number {
  const ms = Number.parseInt(marker, 10);
  return Number.isSafeInteger(ms) ? ms : now;
}

export interface GuardedWrite {
  readonly script: Script;
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
  /** Takes this write back if it landed; a no-op otherwise. */
  readonly undo: {
    readonly lua: string;
    readonly keys: readonly string[];
    readonly args: readonly (string | number)[];
  };
  /** Whether the script's reply says it wrote (only a write that happened needs replicas to acknowledge it). */
  readonly wrote: (reply: unknown) => boolean;
}

export interface GuardOptions {
  /** Replicas that must acknowledge the write (0: the master's answer suffices). */
  readonly waitReplicas: number;
  /** Bound on the whole exchange; default: the client's own command timeout. */
  readonly timeoutMs?: number;
}

/** For a client that somehow carries no command timeout of its own: toolgate's default for it. */
const FALLBACK_TIMEOUT_MS = 500;

export type GuardedReply = { readonly ok: true; readonly reply: unknown } | { readonly ok: false };

const FAILED: GuardedReply = Object.freeze({ ok: false });

export async function guardedWrite(client: RedisClient, w: GuardedWrite, options: GuardOptions): Promise<GuardedReply> {
  const undo = () => sendNow(client, w.undo);
  const timeoutMs = options.timeoutMs ?? commandTimeoutOf(client) ?? FALLBACK_TIMEOUT_MS;
  try {
    const r = await redisCall(client, timeoutMs, () => write(client, w, options.waitReplicas, timeoutMs));
    if (!r.ok) undo();
    return r;
  } catch (err) {
    // Refused by the breaker, nothing was sent.
    if (!(err instanceof RedisBreakerOpenError)) undo();
    return FAILED;
  }
}

async function write(
  client: RedisClient,
  w: GuardedWrite,
  waitReplicas: number,
  timeoutMs: number,
): Promise<GuardedReply> {
  if (waitReplicas === 0) return { ok: true, reply: await runScript(client, w.script, w.keys, w.args) };
  const replies = await client
    .pipeline()
    .eval(w.script.lua, w.keys.length, ...w.keys, ...w.args)
    .wait(waitReplicas, waitMs(client, timeoutMs))
    .exec();
  const [written, wait] = replies ?? [];
  if (written === undefined || written[0] !== null) return FAILED;
  const acknowledged = wait !== undefined && wait[0] === null && typeof wait[1] === 'number' && wait[1] >= waitReplicas;
  return w.wrote(written[1]) && !acknowledged ? FAILED : { ok: true, reply: written[1] };
}

/**
 * Sends a script at once, on the client's connection, answered by nobody. As
 * an explicit pipeline it is written to the socket now: a plain command would
 * wait for the next auto-pipeline flush, and a retry sent meanwhile would
 * overtake it. As EVAL, not EVALSHA: a NOSCRIPT answer would come too late.
 */
export function sendNow(client: RedisClient, s: GuardedWrite['undo']): void {
  client
    .pipeline()
    .eval(s.lua, s.keys.length, ...s.keys, ...s.args)
    .exec()
    .catch(() => {});
}

/**
 * How long WAIT may block: half the exchange's bound, and never as long as
 * the client's own command timeout, which would fail the WAIT itself and turn
 * a write the replicas did acknowledge into a failure.
 */
function waitMs(client: RedisClient, timeoutMs: number): number {
  const own = commandTimeoutOf(client);
  return Math.max(1, Math.floor((own === undefined ? timeoutMs : Math.min(timeoutMs, own)) / 2));
}

function commandTimeoutOf(client: RedisClient): number | undefined {
  const o = client.options;
  const own =
    'commandTimeout' in o ? o.commandTimeout : 'redisOptions' in o ? o.redisOptions?.commandTimeout : undefined;
  return typeof own === 'number' && own > 0 ? own : undefined;
}
