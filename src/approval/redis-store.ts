import type { RedisClient } from '../cache/redis.ts';
import { approvalKeys } from '../cache/keys.ts';
import { randomUUID } from 'node:crypto';
import { guardedWrite, sendNow, type GuardOptions } from '../cache/guarded-write.ts';
import { runScript, script } from '../cache/scripts.ts';
import {
  decided,
  EXPIRED_NOTICE_MS,
  parseRecord,
  spendOutcome,
  type ApprovalRecord,
  type DecideResult,
  type SpendResult,
} from './record.ts';
import type { ApprovalStore } from './store.ts';

/**
 * Creates the record unless the binding has one: SET NX of the record, then
 * its id index and its place in the pending set, in one step. Returns the
 * existing record's text when there was one.
 */
const OPEN = script(`
local existing = redis.call('GET', KEYS[1])
if existing then return existing end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[5])
return false
`);

/**
 * Reads the binding's record and, unless it is pending inside its time,
 * deletes it with its id index in the same step: of two replicas racing on
 * one approved record, exactly one gets it back as approved.
 *
 * An approved record is spent in two phases. The spend leaves a marker under
 * the binding (KEYS[3]) holding the record and a token only this spend knows;
 * once Redis vouches for the spend, the spender deletes the marker (CONFIRM),
 * and when it cannot, it puts the record back (UNDO_SPEND). A marker a repeat
 * finds is a spend neither confirmed nor taken back: its call may have run,
 * so the repeat is told `unsettled`, never handed a fresh approval as if
 * nothing had happened. After `settle` ms nobody can still take the marker
 * back: the repeat that sees it then consumes it, so the next one asks anew.
 * Denied and expired records are only told once: nothing runs on them.
 * KEYS: record, pending set, spend marker. ARGV: now, id prefix, token, settle ms.
 */
const SPEND = script(`
local now = tonumber(ARGV[1])
local marked = redis.call('GET', KEYS[3])
if marked then
  local m = cjson.decode(marked)
  if now - tonumber(m.at) >= tonumber(ARGV[4]) then redis.call('DEL', KEYS[3]) end
  return {'unsettled', m.text}
end
local text = redis.call('GET', KEYS[1])
if not text then return false end
local r = cjson.decode(text)
local live = tonumber(r.expiresAt) > now
if r.state == 'pending' and live then return {'keep', text} end
local kind = 'told'
if r.state == 'approved' and live then
  kind = 'take'
  redis.call('SET', KEYS[3], cjson.encode({token = ARGV[3], at = now, text = text}), 'PX', redis.call('PTTL', KEYS[1]))
end
redis.call('DEL', KEYS[1], ARGV[2] .. r.id)
redis.call('ZREM', KEYS[2], r.id)
return {kind, text}
`);

/**
 * Puts back what one spend took, unless the binding has a record again:
 * a spend answered unavailable (deadline missed, replicas silent) never
 * ran its call, so the approval stays usable rather than burnt.
 * KEYS: record, spend marker. ARGV: id prefix, binding, token.
 */
const UNDO_SPEND = `
local marked = redis.call('GET', KEYS[2])
if not marked then return 0 end
local m = cjson.decode(marked)
if m.token ~= ARGV[3] then return 0 end
local ttl = redis.call('PTTL', KEYS[2])
redis.call('DEL', KEYS[2])
if ttl <= 0 or redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local r = cjson.decode(m.text)
redis.call('SET', KEYS[1], m.text, 'PX', ttl)
redis.call('SET', ARGV[1] .. r.id, ARGV[2], 'PX', ttl)
return 1
`;

/** The spend that Redis vouched for is final: its marker goes (compare-and-delete). KEYS: spend marker. ARGV: token. */
const CONFIRM_SPEND = {
  lua: `
local marked = redis.call('GET', KEYS[1])
if marked and cjson.decode(marked).token == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`,
} as const;

/**
 * How long a spend marker may still be taken back by its spender: far beyond
 * any deadline an undo could follow, even one queued behind other writes'
 * WAITs on a connection to a stalled Redis.
 */
const SPEND_SETTLE_MS = 60_000;

/** Replaces the record only while it is still the text the decision was made on (compare-and-set). */
const DECIDE = script(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
redis.call('ZREM', KEYS[2], ARGV[3])
return 1
`);

/** A spend Redis could not vouch for (and that was put back): the caller answers approval_unavailable. */
class ApprovalStoreUnavailable extends Error {
  override readonly name = 'ApprovalStoreUnavailable';
}

export interface RedisApprovalOptions {
  readonly client: RedisClient;
  readonly domain: string;
  /** How a spend is written: replicas that must acknowledge it before its call runs, so a failover cannot hand the approval out again. */
  readonly guard?: GuardOptions;
}

/** Approvals shared by every replica, under the policy domain's hash tag (one Cluster slot). */
export class RedisApprovalStore implements ApprovalStore {
  readonly #client: RedisClient;
  readonly #keys: ReturnType<typeof approvalKeys>;
  readonly #guard: GuardOptions;

  constructor(options: RedisApprovalOptions) {
    this.#client = options.client;
    this.#keys = approvalKeys(options.domain);
    this.#guard = options.guard ?? { waitReplicas: 0 };
  }

  async open(draft: ApprovalRecord): Promise<{ record: ApprovalRecord; created: boolean }> {
    const text = JSON.stringify(draft);
    const ttl = Math.max(1, draft.expiresAt + EXPIRED_NOTICE_MS - draft.createdAt);
    const existing = await runScript(
      this.#client,
      OPEN,
      [this.#keys.record(draft.binding), this.#keys.id(draft.id), this.#keys.pending],
      [text, ttl, draft.binding, draft.expiresAt, draft.id],
    );
    return typeof existing === 'string'
      ? { record: parseRecord(existing), created: false }
      : { record: draft, created: true };
  }

  /** Guarded (cache/guarded-write.ts): a spend Redis cannot vouch for is put back and fails closed. */
  async spend(binding: string, now: number): Promise<SpendResult> {
    const key = this.#keys.record(binding);
    const marker = this.#keys.spending(binding);
    const token = randomUUID();
    const written = await guardedWrite(
      this.#client,
      {
        script: SPEND,
        keys: [key, this.#keys.pending, marker],
        args: [now, this.#keys.idPrefix, token, SPEND_SETTLE_MS],
        undo: { lua: UNDO_SPEND, keys: [key, marker], args: [this.#keys.idPrefix, binding, token] },
        wrote: (reply) => Array.isArray(reply) && reply[0] === 'take',
      },
      this.#guard,
    );
    if (!written.ok) throw new ApprovalStoreUnavailable();
    if (written.reply === null) return { kind: 'none' };
    const [phase, text] = written.reply as [string, string];
    const record = parseRecord(text);
    if (phase === 'unsettled') return { kind: 'unsettled', record };
    // Lost, the confirmation only makes a later repeat hear `unsettled` for a call that did run: honest, never a second run.
    if (phase === 'take') sendNow(this.#client, { ...CONFIRM_SPEND, keys: [marker], args: [token] });
    return { kind: spendOutcome(record, now), record };
  }

  async get(id: string): Promise<ApprovalRecord | undefined> {
    const binding = await this.#client.get(this.#keys.id(id));
    if (binding === null) return undefined;
    const text = await this.#client.get(this.#keys.record(binding));
    return text === null ? undefined : parseRecord(text);
  }

  async decide(
    id: string,
    state: 'approved' | 'denied',
    approver: string,
    now: number,
    via?: ApprovalRecord['decidedVia'],
  ): Promise<DecideResult> {
    // A lost compare-and-set means the record changed under us (spent, decided): read it again once.
    for (let attempt = 0; attempt < 2; attempt++) {
      const binding = await this.#client.get(this.#keys.id(id));
      const text = binding === null ? null : await this.#client.get(this.#keys.record(binding));
      if (binding === null || text === null) return { kind: 'not_found' };
      const record = parseRecord(text);
      const next = decided(record, state, approver, now, via);
      if (next === undefined) return { kind: 'not_pending', record };
      const set = await runScript(
        this.#client,
        DECIDE,
        [this.#keys.record(binding), this.#keys.pending],
        [text, JSON.stringify(next), id],
      );
      if (set === 1) return { kind: 'decided', record: next };
    }
    const again = await this.get(id);
    return again === undefined ? { kind: 'not_found' } : { kind: 'not_pending', record: again };
  }

  async pending(now: number, limit: number): Promise<readonly ApprovalRecord[]> {
    await this.#client.zremrangebyscore(this.#keys.pending, '-inf', now);
    const ids = await this.#client.zrangebyscore(this.#keys.pending, `(${now}`, '+inf', 'LIMIT', 0, limit);
    const records = await Promise.all(ids.map((id) => this.get(id)));
    return records.filter((r): r is ApprovalRecord => r !== undefined && r.state === 'pending');
  }
}
